package identity

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
)

// Resource is the gateway as an OAuth resource server: it verifies the
// JWTs agents present on its MCP endpoints, answers a refused one with the
// RFC 9728 challenge, and serves each endpoint's protected-resource
// metadata.
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
type Resource struct {
	v      *Verifier
	issuer string
	// base is the audience as an http(s) URL without a final slash, ""
	// when it is not one.
	base string
}

// surfaceIDRE is what a surface id may be.
var surfaceIDRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// NewResource builds the verifier of cfg. A jwks_file is read now; a
// jwks_url is fetched in the background, so a key server that is down
// shows in cfg.Logger at start and is retried by the first token.
func NewResource(cfg Config) (*Resource, error) {
	v, err := NewVerifier(cfg)
	if err != nil {
		return nil, err
	}
	j := &Resource{v: v, issuer: cfg.Issuer}
	if u, err := url.Parse(cfg.Audience); err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.RawQuery == "" && u.Fragment == "" && u.User == nil {
		j.base = strings.TrimSuffix(cfg.Audience, "/")
	}
	if cfg.JWKSURL != "" {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), DefaultFetchTimeout)
			defer cancel()
			if err := v.Warm(ctx); err != nil {
				v.cfg.Logger.Warn("gateway.identity.jwt: the signing keys could not be fetched yet; tokens are refused until they can", "jwks_url", cfg.JWKSURL, "err", err)
			}
		}()
	}
	return j, nil
}

// Verify checks tok for the endpoint of surface and returns what it says;
// the caller checks that the agent is declared.
func (j *Resource) Verify(ctx context.Context, tok, surface string) (Identity, error) {
	return j.v.Verify(ctx, tok, j.audiences(surface)...)
}

// AgentClaim is the claim the agent id is read from.
func (j *Resource) AgentClaim() string { return j.v.AgentClaim() }

// resourceURL is the RFC 9728 resource identifier of the MCP endpoint of
// surface: built from the audience when it is a URL, else from how the
// request reached the gateway.
func (j *Resource) resourceURL(r *http.Request, surface string) string {
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
func (j *Resource) audiences(surface string) []string {
	if j.base == "" {
		return nil
	}
	return []string{j.base + "/mcp/" + url.PathEscape(surface)}
}

// Challenge answers 401 with the RFC 9728 pointer to the endpoint's
// metadata: error=invalid_token when a token was presented, none when the
// request carried no credentials (RFC 6750 §3.1).
func (j *Resource) Challenge(w http.ResponseWriter, r *http.Request, surface string, presented bool) {
	c := Challenge{}
	body := "unauthorized: send Authorization: Bearer <agent token or OAuth access token>"
	if presented {
		c = Challenge{Error: "invalid_token", Description: "the bearer token was not accepted"}
		body = "unauthorized: the bearer token was not accepted"
	}
	if meta, err := MetadataURL(j.resourceURL(r, surface)); err == nil {
		w.Header().Set("WWW-Authenticate", WWWAuthenticate(meta, c))
	} else {
		w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="invalid_token"`)
	}
	http.Error(w, body, http.StatusUnauthorized)
}

// ServeMetadata answers GET /.well-known/oauth-protected-resource/mcp/<surface>
// without authentication, alike for every well-formed surface id; a nil
// Resource (no gateway.identity.jwt) has nothing to describe.
func (j *Resource) ServeMetadata(w http.ResponseWriter, r *http.Request, surface string) {
	if j == nil || !surfaceIDRE.MatchString(surface) {
		http.NotFound(w, r)
		return
	}
	m, err := NewResourceMetadata(j.resourceURL(r, surface), j.issuer, nil)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	m.Handler().ServeHTTP(w, r)
}

// Unauthorized answers 401 with the challenge RFC 6750 asks for, for a
// gateway that takes static tokens only (desc says what to send).
func Unauthorized(w http.ResponseWriter, desc string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="invalid_token", error_description="`+desc+`"`)
	http.Error(w, "unauthorized: "+desc, http.StatusUnauthorized)
}
