package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/approvals"
)

// AdminTokenEnv is where `toolgate approvals` reads the admin token from.
const AdminTokenEnv = "TOOLGATE_ADMIN_TOKEN"

// adminAuth holds the digest of the admin token: the one secret that may
// approve, deny and read the audit over HTTP. Agent tokens never pass it.
type adminAuth struct {
	digest [32]byte
	// off says why the admin API is unavailable ("" when it is on).
	off string
}

// initAdmin resolves gateway.admin_token. Without one the admin API and
// the console answer 403 with how to turn them on; a token equal to an
// agent's is refused, since that agent could then approve its own calls.
func (g *Gateway) initAdmin(getenv func(string) string, agentTokens map[string]string) error {
	ref := g.ws.Gateway.AdminToken
	if ref == nil {
		g.admin = &adminAuth{off: "the admin API is off: set gateway.admin_token: {env: NAME} in the workspace and export NAME"}
		return nil
	}
	tok, err := ref.Resolve(getenv)
	if err != nil || tok == "" {
		g.log.Warn("admin token unavailable; the admin API and console are off", "err", err)
		g.admin = &adminAuth{off: fmt.Sprintf("the admin API is off: gateway.admin_token could not be read (%v)", err)}
		return nil
	}
	for agent, at := range agentTokens {
		if subtle.ConstantTimeCompare([]byte(at), []byte(tok)) == 1 {
			return fmt.Errorf("%s: gateway.admin_token has the same value as agent %q's token; the admin token must be a secret of its own (an agent holding it could approve its own calls)", ref.Pos, agent)
		}
	}
	g.admin = &adminAuth{digest: sha256.Sum256([]byte(tok))}
	return nil
}

// tokenOK compares a presented token with the admin token in constant time.
func (a *adminAuth) tokenOK(tok string) bool {
	if a.off != "" || tok == "" {
		return false
	}
	d := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(d[:], a.digest[:]) == 1
}

// mountAdmin adds the admin API and the operator console to mux.
func (g *Gateway) mountAdmin(mux *http.ServeMux) {
	mux.Handle("GET /admin/status", g.adminOnly(g.handleStatus))
	mux.Handle("GET /admin/approvals", g.adminOnly(g.handlePending))
	mux.Handle("GET /admin/approvals/{id}", g.adminOnly(g.handleApproval))
	mux.Handle("POST /admin/approvals/{id}/approve", g.adminOnly(g.handleApprove))
	mux.Handle("POST /admin/approvals/{id}/deny", g.adminOnly(g.handleDeny))
	mux.Handle("GET /admin/audit", g.adminOnly(g.handleAuditQuery))
	g.mountConsole(mux)
}

// adminOnly admits a request bearing the admin token, or a console session
// from this same origin; everything else is refused before h runs.
func (g *Gateway) adminOnly(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !originAllowed(r, g.ws.Gateway.AllowedOrigins) {
			http.Error(w, "forbidden: this Origin or Host may not reach toolgate (DNS rebinding protection); list trusted origins in gateway.allowed_origins", http.StatusForbidden)
			return
		}
		if g.admin.off != "" {
			jsonError(w, http.StatusForbidden, g.admin.off)
			return
		}
		if tok := bearer(r); tok != "" {
			if !g.admin.tokenOK(tok) {
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate-admin", error="invalid_token"`)
				jsonError(w, http.StatusUnauthorized, "the bearer token is not the admin token (agent tokens never work here); set $"+AdminTokenEnv)
				return
			}
			h(w, r)
			return
		}
		if g.consoleSession(r) {
			if !sameOrigin(r) || (r.Method != http.MethodGet && r.Header.Get(consoleHeader) == "") {
				jsonError(w, http.StatusForbidden, "console requests must come from the console itself")
				return
			}
			h(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate-admin"`)
		jsonError(w, http.StatusUnauthorized, "send Authorization: Bearer <admin token> (gateway.admin_token; `toolgate approvals` reads $"+AdminTokenEnv+")")
	})
}

// handlePending lists the pending approval requests of the whole
// deployment (every process sharing the store), oldest first.
func (g *Gateway) handlePending(w http.ResponseWriter, r *http.Request) {
	pending, err := g.approvals.PendingContext(r.Context())
	if err != nil {
		jsonError(w, http.StatusServiceUnavailable, "the shared store did not answer: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, nonNil(pending))
}

// handleApproval shows one request in whatever state it is.
func (g *Gateway) handleApproval(w http.ResponseWriter, r *http.Request) {
	req, err := g.approvals.GetContext(r.Context(), r.PathValue("id"))
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
func (g *Gateway) handleApprove(w http.ResponseWriter, r *http.Request) {
	req, err := g.approvals.ApproveContext(r.Context(), r.PathValue("id"), approvals.ByOperator)
	g.answerDecision(w, req, err)
}

func (g *Gateway) handleDeny(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
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
	req, err := g.approvals.DenyContext(r.Context(), r.PathValue("id"), approvals.ByOperator, body.Reason)
	g.answerDecision(w, req, err)
}

func (g *Gateway) answerDecision(w http.ResponseWriter, req approvals.Request, err error) {
	switch {
	case errors.Is(err, approvals.ErrNotFound):
		jsonError(w, http.StatusNotFound, err.Error())
	case errors.Is(err, approvals.ErrFinal):
		jsonError(w, http.StatusConflict, err.Error()+"; a denied or expired request is final: the agent repeats its call to ask again")
	case err != nil:
		jsonError(w, http.StatusInternalServerError, err.Error())
	default:
		g.log.Info("approval decided", "approval", req.ID, "state", req.State, "agent", req.Agent, "action", req.Action)
		writeJSON(w, http.StatusOK, req)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

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
