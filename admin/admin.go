// Package admin is the operator's side of a toolgate daemon: the admin API
// (/admin/status, the approvals of the whole deployment, the audit query)
// and the operator console at /ui with its live feed. It knows the
// gateway only through what Options hands it — the approval broker, a
// reader of the audit, a status function and the HTTP origin check — so
// it holds no call path and decides nothing.
//
// Trust boundary: every route but the console's login page and assets
// admits a request only with the admin token, or with a console session
// (a random id standing in for the token, HttpOnly and SameSite=Strict)
// from the console's own origin; state-changing console requests must also
// carry a header a cross-origin page cannot add without a preflight. Agent
// tokens never pass, and the token is compared by digest in constant time.
package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/identity"
)

// TokenEnv is where `toolgate approvals` reads the admin token from.
const TokenEnv = "TOOLGATE_ADMIN_TOKEN"

// AuditReader reads the deployment's audit like audit.Tail: the JSONL
// file, or the chain in PostgreSQL.
type AuditReader interface {
	Tail(ctx context.Context, opts audit.TailOptions, emit func(audit.Record) error) error
}

// Options are what the admin API needs of the gateway.
type Options struct {
	// Token is the admin token (gateway.admin_token, resolved); Off, when
	// set, says why the admin API and the console are off, and they
	// answer 403 with it.
	Token string
	Off   string
	// Operators are the named operators with a token of their own
	// (gateway.operators); each decision they make is recorded under
	// operator:<id>.
	Operators []Operator
	// OperatorJWT, when set, verifies a bearer JWT as an operator
	// (gateway.identity.jwt.operator_claim) and returns its id, which it
	// has checked is declared.
	OperatorJWT func(ctx context.Context, token string) (string, error)
	// Approvals is the broker on the deployment's shared store.
	Approvals *approvals.Broker
	// Audit reads the audit for the query and the console's feed.
	Audit AuditReader
	// Status is what GET /admin/status answers (encoded as JSON).
	Status func() any
	// AllowOrigin guards against DNS rebinding and cross-site requests
	// (the gateway's check, the same on every route it serves).
	AllowOrigin func(*http.Request) bool
	// AllowedOrigins are gateway.allowed_origins: besides the console's
	// own, the origins whose pages may open the live feed.
	AllowedOrigins []string
	Logger         *slog.Logger
	// OnRefused, when set, is told of each request refused for its
	// credentials: "no_token" or "unknown_token" (a counter; it must not
	// block).
	OnRefused func(reason string)
}

// Server serves the admin API and the console of one gateway process.
type Server struct {
	opts      Options
	digest    [32]byte
	hasAdmin  bool
	operators operatorTokens
	sessions  consoleSessions
	log       *slog.Logger
}

// New returns the admin server of opts.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Status == nil {
		opts.Status = func() any { return struct{}{} }
	}
	if opts.OnRefused == nil {
		opts.OnRefused = func(string) {}
	}
	if opts.AllowOrigin == nil {
		opts.AllowOrigin = func(*http.Request) bool { return true }
	}
	if opts.Off == "" && opts.Token == "" && len(opts.Operators) == 0 && opts.OperatorJWT == nil {
		opts.Off = "the admin API is off: no admin token is set"
	}
	s := &Server{opts: opts, log: opts.Logger, operators: newOperatorTokens(opts.Operators)}
	if opts.Off == "" && opts.Token != "" {
		s.digest, s.hasAdmin = sha256.Sum256([]byte(opts.Token)), true
	}
	s.opts.Token, s.opts.Operators = "", nil // only the digests are kept
	return s
}

// On reports whether the admin API and the console answer at all.
func (s *Server) On() bool { return s.opts.Off == "" }

// IsToken reports whether tok is the admin token or a named operator's
// static token (false when the admin API is off): no agent may hold one.
func (s *Server) IsToken(tok string) bool {
	if !s.On() || tok == "" {
		return false
	}
	d := sha256.Sum256([]byte(tok))
	_, op := s.operators[d]
	return op || (s.hasAdmin && subtle.ConstantTimeCompare(d[:], s.digest[:]) == 1)
}

// Mount adds the admin API and the operator console to mux.
func (s *Server) Mount(mux *http.ServeMux) {
	mux.Handle("GET /admin/status", s.Guard(http.HandlerFunc(s.handleStatus)))
	mux.Handle("GET /admin/whoami", s.Guard(http.HandlerFunc(s.handleWhoami)))
	mux.Handle("GET /admin/rules", s.Guard(http.HandlerFunc(s.handleRules)))
	mux.Handle("GET /admin/approvals", s.Guard(http.HandlerFunc(s.handlePending)))
	mux.Handle("GET /admin/approvals/{id}", s.Guard(http.HandlerFunc(s.handleApproval)))
	mux.Handle("POST /admin/approvals/{id}/approve", s.Guard(http.HandlerFunc(s.handleApprove)))
	mux.Handle("POST /admin/approvals/{id}/deny", s.Guard(http.HandlerFunc(s.handleDeny)))
	mux.Handle("GET /admin/audit", s.Guard(http.HandlerFunc(s.handleAuditQuery)))
	s.mountConsole(mux)
}

// Guard admits a request bearing the admin token, or a console session
// from this same origin; everything else is refused before h runs. The
// gateway puts other operator-only routes (/metrics) behind it too.
func (s *Server) Guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.opts.AllowOrigin(r) {
			http.Error(w, "forbidden: this Origin or Host may not reach toolgate (DNS rebinding protection); list trusted origins in gateway.allowed_origins", http.StatusForbidden)
			return
		}
		if !s.On() {
			jsonError(w, http.StatusForbidden, s.opts.Off)
			return
		}
		if refuseTokenInURL(w, r) {
			return
		}
		if tok := identity.Bearer(r); tok != "" {
			who, ok := s.identify(r.Context(), tok)
			if !ok {
				s.opts.OnRefused(identity.RefusedUnknownToken)
				w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate-admin", error="invalid_token"`)
				jsonError(w, http.StatusUnauthorized, "the bearer token is not the admin token nor an operator's (agent tokens never work here); set $"+TokenEnv)
				return
			}
			h.ServeHTTP(w, withWho(r, who))
			return
		}
		if who, ok := s.consoleSession(r); ok {
			if !sameOrigin(r) || (r.Method != http.MethodGet && r.Header.Get(consoleHeader) == "") {
				jsonError(w, http.StatusForbidden, "console requests must come from the console itself")
				return
			}
			h.ServeHTTP(w, withWho(r, who))
			return
		}
		s.opts.OnRefused(identity.RefusedNoToken)
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate-admin"`)
		jsonError(w, http.StatusUnauthorized, "send Authorization: Bearer <admin token> (gateway.admin_token; `toolgate approvals` reads $"+TokenEnv+")")
	})
}

func (s *Server) handleStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, s.opts.Status())
}
