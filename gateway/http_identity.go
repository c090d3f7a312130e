package gateway

import (
	"net/http"

	"github.com/toolgate/toolgate/identity"
	"github.com/toolgate/toolgate/metrics"
	"github.com/toolgate/toolgate/workspace"
)

// newAuthenticator builds how the HTTP front tells agents apart: the
// agents' static tokens and, with gateway.identity.jwt, OAuth access
// tokens whose agent must be declared in the workspace in force (package
// identity holds the checks, the 401 challenges and the trust boundary).
func (g *Gateway) newAuthenticator(ws *workspace.Workspace, tokens map[string]string) (*identity.Authenticator, error) {
	opts := identity.AuthOptions{Tokens: tokens, Known: g.agentExists, Logger: g.log,
		OnRefused: func(reason string) { g.tokenRefused(metrics.EndpointMCP, reason) }}
	if cfg, ok := identity.ConfigFromWorkspace(ws, g.log); ok {
		j, err := identity.NewResource(cfg)
		if err != nil {
			return nil, err
		}
		opts.JWT = j
	}
	return identity.NewAuthenticator(opts), nil
}

// mountIdentity serves the protected-resource metadata of every endpoint
// (404 without gateway.identity.jwt).
func (g *Gateway) mountIdentity(mux *http.ServeMux) {
	mux.HandleFunc("GET "+identity.WellKnownPrefix+"/mcp/{surface}", func(w http.ResponseWriter, r *http.Request) {
		g.auth.ServeMetadata(w, r, r.PathValue("surface"))
	})
}

// tokenRefused counts a request refused for its credentials (no metrics:
// ListServerTools' gateway).
func (g *Gateway) tokenRefused(endpoint, reason string) {
	if g.metrics != nil {
		g.metrics.TokenRefused(endpoint, reason)
	}
}
