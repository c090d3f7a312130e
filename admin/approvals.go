package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/approvals"
)

// maxDenyBody bounds the body of a deny request ({"reason": "…"}).
const maxDenyBody = 64 << 10

// handlePending lists the pending approval requests of the whole
// deployment (every process sharing the store), oldest first.
func (s *Server) handlePending(w http.ResponseWriter, r *http.Request) {
	pending, err := s.opts.Approvals.PendingContext(r.Context())
	if err != nil {
		jsonError(w, http.StatusServiceUnavailable, "the shared store did not answer: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, nonNil(pending))
}

// handleApproval shows one request in whatever state it is.
func (s *Server) handleApproval(w http.ResponseWriter, r *http.Request) {
	req, err := s.opts.Approvals.GetContext(r.Context(), r.PathValue("id"))
	switch {
	case errors.Is(err, approvals.ErrNotFound):
		jsonError(w, http.StatusNotFound, fmt.Sprintf("no approval request %q in this deployment's store", r.PathValue("id")))
	case err != nil:
		jsonError(w, http.StatusServiceUnavailable, "the shared store did not answer: "+err.Error())
	default:
		writeJSON(w, http.StatusOK, req)
	}
}

// handleApprove approves a request held by any process of the deployment;
// the call waiting on it wakes wherever it is.
func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) {
	req, err := s.opts.Approvals.ApproveContext(r.Context(), r.PathValue("id"), approvals.ByOperator)
	s.answerDecision(w, req, err)
}

// handleDeny denies a request, with the reason the body gives (optional).
func (s *Server) handleDeny(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxDenyBody))
		if err != nil {
			jsonError(w, http.StatusBadRequest, "read body: "+err.Error())
			return
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			if err := json.Unmarshal(b, &body); err != nil {
				jsonError(w, http.StatusBadRequest, `the body must be JSON: {"reason": "…"}`)
				return
			}
		}
	}
	req, err := s.opts.Approvals.DenyContext(r.Context(), r.PathValue("id"), approvals.ByOperator, body.Reason)
	s.answerDecision(w, req, err)
}

func (s *Server) answerDecision(w http.ResponseWriter, req approvals.Request, err error) {
	switch {
	case errors.Is(err, approvals.ErrNotFound):
		jsonError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, approvals.ErrFinal):
		jsonError(w, http.StatusConflict, err.Error()+"; a denied or expired request is final: the agent repeats its call to ask again")
	case err != nil:
		jsonError(w, http.StatusInternalServerError, err.Error())
	default:
		s.log.Info("approval decided", "approval", req.ID, "state", req.State, "agent", req.Agent, "action", req.Action)
		writeJSON(w, http.StatusOK, req)
	}
}

// writeJSON answers v as indented JSON, never cached.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// jsonError answers {"error": msg}.
func jsonError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
