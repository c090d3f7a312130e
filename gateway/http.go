package gateway

import (
	"context"
	"mime"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/mcpserve"
)

// HTTPOptions choose how the HTTP endpoints identify agents.
type HTTPOptions struct {
	// Agent fixes the identity for a per-agent instance: its requests must
	// still carry that agent's bearer token (a loopback address is not an
	// identity; any local process could connect). Empty means the daemon:
	// every request carries some agent's token.
	Agent string
}

// Handler serves every surface at /mcp/<surface> over streamable HTTP.
func (g *Gateway) Handler(opts HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	h := &httpFront{g: g, opts: opts}
	mux.Handle("/mcp/{surface}", h)
	g.mountAdmin(mux)
	g.mountHealth(mux)
	g.mountMetrics(mux)
	g.mountIdentity(mux)
	return g.boundBodies(mux)
}

type httpFront struct {
	g    *Gateway
	opts HTTPOptions
}

func (h *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := h.g
	if !originAllowed(r, g.ws.Gateway.AllowedOrigins) {
		http.Error(w, "forbidden: this Origin or Host may not reach toolgate (DNS rebinding protection); list trusted origins in gateway.allowed_origins", http.StatusForbidden)
		return
	}
	if r.Method == http.MethodPost && !isJSONBody(r) {
		// A web page can POST text/plain without a CORS preflight; MCP
		// bodies are JSON, so nothing else is read.
		http.Error(w, "unsupported media type: MCP requests are Content-Type: application/json", http.StatusUnsupportedMediaType)
		return
	}
	// The body is already read, within body_timeout and max_body
	// (boundBodies).

	agent, ok := h.identify(w, r)
	if !ok {
		return
	}
	// The caller's HTTP trace context; a call's _meta traceparent wins
	// over it (startCallSpan).
	r = r.WithContext(g.tracer.Extract(r.Context(), nil, r.Header))
	e, ok := g.endpoint(r.Context(), agent, r.PathValue("surface"))
	if !ok {
		// The same answer for a surface that does not exist and one this
		// agent holds nothing on: existence is not disclosed.
		http.Error(w, "no such MCP endpoint for this agent: /mcp/"+r.PathValue("surface"), http.StatusNotFound)
		return
	}
	e.ServeHTTP(w, r)
}

// identify returns the calling agent, or answers 401 and returns false.
// A static token is looked up first; with gateway.identity.jwt any other
// token is verified as an OAuth access token (identity.go).
func (h *httpFront) identify(w http.ResponseWriter, r *http.Request) (string, bool) {
	g, want := h.g, h.opts.Agent
	surface := r.PathValue("surface")
	tok := bearer(r)
	if g.idp != nil {
		if tok == "" {
			g.idp.challenge(w, r, surface, false)
			return "", false
		}
		if agent := g.tokens.lookup(tok); agent != "" && (want == "" || agent == want) {
			return agent, true
		}
		agent, err := g.verifyJWT(r, tok, surface, want)
		if err != nil {
			g.tokenRefused(r, surface, err)
			g.idp.challenge(w, r, surface, true)
			return "", false
		}
		return agent, true
	}
	if want != "" {
		if tok == "" {
			unauthorized(w, "this instance serves agent "+want+": send Authorization: Bearer <its token>")
			return "", false
		}
		if g.tokens.lookup(tok) != want {
			unauthorized(w, "this instance serves agent "+want+" and the token presented is not its token")
			return "", false
		}
		return want, true
	}
	if tok == "" {
		unauthorized(w, "send Authorization: Bearer <agent token>")
		return "", false
	}
	agent := g.tokens.lookup(tok)
	if agent == "" {
		unauthorized(w, "the bearer token is not any agent's token")
		return "", false
	}
	return agent, true
}

// endpoint returns agent's streamable HTTP endpoint on a surface, built
// on first use: each (agent, surface) has its own session table, so a
// session id issued to one agent means nothing under another's token. ok
// is false when the surface does not exist or the agent holds nothing
// there.
func (g *Gateway) endpoint(ctx context.Context, agent, surfaceID string) (*mcpserve.Endpoint, bool) {
	opts, ok := g.serveOptions(ctx, agent, surfaceID)
	if !ok {
		return nil, false
	}
	key := endpointKey{agent, surfaceID}
	if e, ok := g.endpoints.Load(key); ok {
		return e.(*mcpserve.Endpoint), true
	}
	e := mcpserve.NewEndpoint(opts)
	actual, loaded := g.endpoints.LoadOrStore(key, e)
	if loaded {
		e.Close()
	}
	return actual.(*mcpserve.Endpoint), true
}

// IsLoopbackAddr reports whether a listen address binds loopback only.
func IsLoopbackAddr(addr string) bool {
	host := addr
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		host = addr[:i]
	}
	return isLoopbackHost(host)
}

// isJSONBody reports whether a request says its body is JSON.
func isJSONBody(r *http.Request) bool {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && ct == "application/json"
}
