package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/identity"
	"github.com/toolgate/toolgate/workspace"
)

// OAuth access tokens (DESIGN §12). With gateway.identity.jwt an agent may
// present a JWT instead of its static token: the signature, issuer,
// audience and times are checked by package identity; the agent is the
// value of agent_claim and must be a declared agent (on a per-agent
// instance, that agent). Everything after identity is unchanged.
//
// Trust boundary: the audiences a token may carry are the configured
// audience and, when that is an http(s) URL, the resource URL of the
// endpoint built from it (<audience>/mcp/<surface>) — never anything built
// from the request (its Host header is the caller's to choose, so a token
// minted for another resource server could otherwise be replayed here).
// The Host header only shapes the public metadata document's URLs when
// the audience is not a URL.
//
// A refused token gets a 401 whose body and challenge are the same
// whatever failed; the reason goes to the operator's log. The metadata
// document is served for any well-formed surface id, declared or not, so
// it says nothing about what exists.

// surfaceIDRE is what a surface id may be (DESIGN §3).
var surfaceIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// jwtIdentity is the gateway's token check; nil when the workspace
// declares no gateway.identity.jwt.
type jwtIdentity struct {
	v      *identity.Verifier
	issuer string
	// audience is the configured aud; base is it as an http(s) URL without
	// a final slash, "" when it is not one.
	audience, base string
}

// newJWTIdentity builds the verifier of ws's gateway.identity.jwt (nil,
// nil when there is none). A jwks_file is read now; a jwks_url is fetched
// in the background, so a key server that is down shows in the log at
// start and is retried by the first token.
func newJWTIdentity(ws *workspace.Workspace, log *slog.Logger) (*jwtIdentity, error) {
	cfg, ok := identity.ConfigFromWorkspace(ws, log)
	if !ok {
		return nil, nil
	}
	v, err := identity.NewVerifier(cfg)
	if err != nil {
		return nil, err
	}
	j := &jwtIdentity{v: v, issuer: cfg.Issuer, audience: cfg.Audience}
	if u, err := url.Parse(cfg.Audience); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil {
		j.base = strings.TrimSuffix(cfg.Audience, "/")
	}
	if cfg.JWKSURL != "" {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), identity.DefaultFetchTimeout)
			defer cancel()
			if err := v.Warm(ctx); err != nil {
				log.Warn("gateway.identity.jwt: the signing keys could not be fetched yet; tokens are refused until they can", "jwks_url", cfg.JWKSURL, "err", err)
			}
		}()
	}
	return j, nil
}

// resource is the RFC 9728 resource identifier of the MCP endpoint of
// surface: built from the audience when it is a URL, else from how the
// request reached the gateway.
func (j *jwtIdentity) resource(r *http.Request, surface string) string {
	path := "/mcp/" + url.PathEscape(surface)
	if j.base != "" {
		return j.base + path
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

// audiences are the resources a token for surface may name besides the
// configured audience (see the trust boundary above).
func (j *jwtIdentity) audiences(surface string) []string {
	if j.base == "" {
		return nil
	}
	return []string{j.base + "/mcp/" + url.PathEscape(surface)}
}

// challenge answers 401 with the RFC 9728 pointer to the endpoint's
// metadata: error=invalid_token when a token was presented, none when
// the request carried no credentials (RFC 6750 §3.1).
func (j *jwtIdentity) challenge(w http.ResponseWriter, r *http.Request, surface string, presented bool) {
	c := identity.Challenge{}
	body := "unauthorized: send Authorization: Bearer <agent token or OAuth access token>"
	if presented {
		c = identity.Challenge{Error: "invalid_token", Description: "the bearer token was not accepted"}
		body = "unauthorized: the bearer token was not accepted"
	}
	if meta, err := identity.MetadataURL(j.resource(r, surface)); err == nil {
		w.Header().Set("WWW-Authenticate", identity.WWWAuthenticate(meta, c))
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="invalid_token"`)
	}
	http.Error(w, body, http.StatusUnauthorized)
}

// verify checks a JWT for surface and returns the agent it names, which
// must be declared (and be want, when want is set).
func (g *Gateway) verifyJWT(r *http.Request, tok, surface, want string) (string, error) {
	j := g.idp
	id, err := j.v.Verify(r.Context(), tok, j.audiences(surface)...)
	if err != nil {
		return "", err
	}
	if !g.agentExists(id.Agent) {
		return "", identity.UnknownAgent(j.v.AgentClaim(), id.Agent)
	}
	if want != "" && id.Agent != want {
		return "", &identity.Error{Reason: identity.ReasonUnknownAgent, Detail: "the token names agent " + id.Agent + ", but this instance serves agent " + want}
	}
	return id.Agent, nil
}

// tokenRefused logs why a token was refused (never the token).
func (g *Gateway) tokenRefused(r *http.Request, surface string, err error) {
	g.log.Info("bearer token refused", "surface", surface, "reason", string(identity.ReasonOf(err)), "detail", err.Error(), "remote", r.RemoteAddr)
}

// mountIdentity serves the protected-resource metadata of every endpoint.
func (g *Gateway) mountIdentity(mux *http.ServeMux) {
	mux.Handle("GET "+identity.WellKnownPrefix+"/mcp/{surface}", http.HandlerFunc(g.handleResourceMetadata))
}

// handleResourceMetadata answers GET /.well-known/oauth-protected-resource/mcp/<surface>
// without authentication, alike for every well-formed surface id.
func (g *Gateway) handleResourceMetadata(w http.ResponseWriter, r *http.Request) {
	surface := r.PathValue("surface")
	if g.idp == nil || !surfaceIDRE.MatchString(surface) {
		http.NotFound(w, r)
		return
	}
	m, err := identity.NewResourceMetadata(g.idp.resource(r, surface), g.idp.issuer, nil)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	m.Handler().ServeHTTP(w, r)
}
