package identity

import (
	"log/slog"
	"net/http"
)

// Authenticator says which agent an HTTP request to an MCP endpoint comes
// from: by its static bearer token (Tokens) or, with a Resource, by an
// OAuth access token. A request it cannot attribute is answered 401 here,
// before anything reads its body. Identity never comes from the body.
type Authenticator struct {
	tokens *Tokens
	jwt    *Resource // nil: static tokens only
	known  func(agent string) bool
	log    *slog.Logger
}

// AuthOptions are an Authenticator's parts.
type AuthOptions struct {
	// Tokens are the agents' static tokens (agent id → token).
	Tokens map[string]string
	// JWT, when set, verifies access tokens (gateway.identity.jwt).
	JWT *Resource
	// Known reports whether a token's agent is declared (in the
	// workspace in force); a JWT naming anyone else is refused.
	Known func(agent string) bool
	// Logger receives why a token was refused (never the token).
	Logger *slog.Logger
}

// NewAuthenticator returns the authenticator of opts.
func NewAuthenticator(opts AuthOptions) *Authenticator {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Known == nil {
		opts.Known = func(string) bool { return false }
	}
	return &Authenticator{tokens: NewTokens(opts.Tokens), jwt: opts.JWT, known: opts.Known, log: opts.Logger}
}

// ReplaceTokens makes tokens the static tokens in force (a reload).
func (a *Authenticator) ReplaceTokens(tokens map[string]string) { a.tokens.Replace(tokens) }

// Authenticate returns the agent r comes from for the endpoint of surface,
// or answers 401 and returns false. want, when set, is the one agent a
// per-agent instance serves: any other agent's credentials are refused
// (a loopback address is not an identity, so the instance still needs its
// agent's token). A static token is looked up first; with a Resource any
// other token is verified as an access token.
func (a *Authenticator) Authenticate(w http.ResponseWriter, r *http.Request, surface, want string) (string, bool) {
	c, ok := a.AuthenticateCaller(w, r, surface, want)
	return c.Agent, ok
}

// AuthenticateCaller is Authenticate returning the whole Caller: with an
// access token, also the scopes the token grants.
func (a *Authenticator) AuthenticateCaller(w http.ResponseWriter, r *http.Request, surface, want string) (Caller, bool) {
	tok := Bearer(r)
	if a.jwt != nil {
		if tok == "" {
			a.jwt.Challenge(w, r, surface, false)
			return Caller{}, false
		}
		if agent := a.tokens.Lookup(tok); agent != "" && (want == "" || agent == want) {
			return Caller{Agent: agent}, true
		}
		id, err := a.verify(r, tok, surface, want)
		if err != nil {
			a.log.Info("bearer token refused", "surface", surface, "reason", string(ReasonOf(err)), "detail", err.Error(), "remote", r.RemoteAddr)
			a.jwt.Challenge(w, r, surface, true)
			return Caller{}, false
		}
		return Caller{Agent: id.Agent, TokenScoped: true, Scopes: id.Scopes}, true
	}
	agent, ok := a.authenticateStatic(w, tok, want)
	return Caller{Agent: agent}, ok
}

// authenticateStatic attributes a request by an agent's static token.
func (a *Authenticator) authenticateStatic(w http.ResponseWriter, tok, want string) (string, bool) {
	if want != "" {
		if tok == "" {
			Unauthorized(w, "this instance serves agent "+want+": send Authorization: Bearer <its token>")
			return "", false
		}
		if a.tokens.Lookup(tok) != want {
			Unauthorized(w, "this instance serves agent "+want+" and the token presented is not its token")
			return "", false
		}
		return want, true
	}
	if tok == "" {
		Unauthorized(w, "send Authorization: Bearer <agent token>")
		return "", false
	}
	agent := a.tokens.Lookup(tok)
	if agent == "" {
		Unauthorized(w, "the bearer token is not any agent's token")
		return "", false
	}
	return agent, true
}

// verify checks a JWT for surface and returns what it says; the agent it
// names must be declared (and be want, when want is set).
func (a *Authenticator) verify(r *http.Request, tok, surface, want string) (Identity, error) {
	id, err := a.jwt.Verify(r.Context(), tok, surface)
	if err != nil {
		return Identity{}, err
	}
	if !a.known(id.Agent) {
		return Identity{}, UnknownAgent(a.jwt.AgentClaim(), id.Agent)
	}
	if want != "" && id.Agent != want {
		return Identity{}, &Error{Reason: ReasonUnknownAgent, Detail: "the token names agent " + id.Agent + ", but this instance serves agent " + want}
	}
	return id, nil
}

// ServeMetadata serves the protected-resource metadata of the endpoint of
// surface (404 without a Resource).
func (a *Authenticator) ServeMetadata(w http.ResponseWriter, r *http.Request, surface string) {
	a.jwt.ServeMetadata(w, r, surface)
}
