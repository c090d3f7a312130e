package admin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

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

// decisionBody is the optional JSON body of approve and deny: a reason
// (deny), and "for": a duration making the decision a timed rule
// (approve --for: the same tool under the same grant runs without asking;
// deny --for: the identical call is refused) for that long.
type decisionBody struct {
	Reason string `json:"reason"`
	For    string `json:"for"`
}

// readDecision reads the body of a decision; ok is false when it answered.
func readDecision(w http.ResponseWriter, r *http.Request) (reason string, d time.Duration, ok bool) {
	var body decisionBody
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxDenyBody))
		if err != nil {
			jsonError(w, http.StatusBadRequest, "read body: "+err.Error())
			return "", 0, false
		}
		if len(strings.TrimSpace(string(b))) > 0 {
			if err := json.Unmarshal(b, &body); err != nil {
				jsonError(w, http.StatusBadRequest, `the body must be JSON: {"reason": "…"}, optionally with "for": "1h"`)
				return "", 0, false
			}
		}
	}
	if body.For != "" {
		var err error
		if d, err = time.ParseDuration(body.For); err != nil || d <= 0 {
			jsonError(w, http.StatusBadRequest, fmt.Sprintf(`"for": %q is not a positive duration; write it like 15m or 1h`, body.For))
			return "", 0, false
		}
	}
	return body.Reason, d, true
}

// handleApprove approves a request held by any process of the deployment;
// the call waiting on it wakes wherever it is. With "for", it also makes
// a timed rule (approvals.Broker.ApproveFor).
func (s *Server) handleApprove(w http.ResponseWriter, r *http.Request) {
	_, d, ok := readDecision(w, r)
	if !ok {
		return
	}
	req, err := s.opts.Approvals.ApproveFor(r.Context(), r.PathValue("id"), Who(r), d)
	s.answerDecision(w, req, err)
}

// handleDeny denies a request, with the reason the body gives (optional);
// with "for", the identical call is refused for that long.
func (s *Server) handleDeny(w http.ResponseWriter, r *http.Request) {
	reason, d, ok := readDecision(w, r)
	if !ok {
		return
	}
	req, err := s.opts.Approvals.DenyFor(r.Context(), r.PathValue("id"), Who(r), reason, d)
	s.answerDecision(w, req, err)
}

// handleRules lists the live timed rules (approve/deny --for).
func (s *Server) handleRules(w http.ResponseWriter, r *http.Request) {
	rules, err := s.opts.Approvals.Rules(r.Context())
	if err != nil {
		jsonError(w, http.StatusServiceUnavailable, "the shared store did not answer: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, nonNil(rules))
}

func (s *Server) answerDecision(w http.ResponseWriter, req approvals.Request, err error) {
	switch {
	case errors.Is(err, approvals.ErrNotFound):
		jsonError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, approvals.ErrFinal):
		jsonError(w, http.StatusConflict, err.Error()+"; a denied or expired request is final: the agent repeats its call to ask again")
	case errors.Is(err, approvals.ErrStrictFor), errors.Is(err, approvals.ErrBadFor):
		jsonError(w, http.StatusBadRequest, err.Error())
	case err != nil:
		jsonError(w, http.StatusInternalServerError, err.Error())
	default:
		args := []any{"approval", req.ID, "state", req.State, "by", req.DecidedBy, "agent", req.Agent, "action", req.Action}
		if req.Rule != nil {
			args = append(args, "rule", req.Rule.ID, "until", req.Rule.Expires)
		}
		s.log.Info("approval decided", args...)
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
