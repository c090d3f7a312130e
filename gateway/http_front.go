package gateway

import (
	"context"
	"mime"
	"net/http"

	"github.com/toolgate/toolgate/identity"
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

// Handler serves every surface at /mcp/<surface> over streamable HTTP,
// with the admin API and console, the health probes, /metrics and the
// protected-resource metadata beside them; every body is read within its
// bounds first (boundBodies).
func (g *Gateway) Handler(opts HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp/{surface}", &httpFront{g: g, opts: opts})
	g.admin.Mount(mux)
	g.mountHealth(mux)
	g.mountMetrics(mux)
	g.mountIdentity(mux)
	return g.boundBodies(mux)
}

// httpFront is the MCP endpoints' door: origin, content type and identity
// are checked here, then the request goes to the agent's endpoint.
type httpFront struct {
	g    *Gateway
	opts HTTPOptions
}

func (h *httpFront) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := h.g
	if !g.allowOrigin(r) {
		forbidOrigin(w, r)
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
	caller, ok := g.auth.AuthenticateCaller(w, r, r.PathValue("surface"), h.opts.Agent)
	if !ok {
		return
	}
	agent := caller.Agent
	// The token's scopes narrow what each call may use (callTool).
	r = r.WithContext(identity.WithCaller(r.Context(), caller))
	// The caller's HTTP trace context; a call's _meta traceparent wins
	// over it (startCallSpan).
	r = r.WithContext(g.tracer.Extract(r.Context(), nil, r.Header))
	e, ok := g.endpoint(r.Context(), agent, r.PathValue("surface"))
	if !ok {
		if err := g.unavailable(agent, r.PathValue("surface")); err != nil {
			// A server this agent is granted is down: say which and why,
			// rather than that the endpoint does not exist.
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		// The same answer for a surface that does not exist and one this
		// agent holds nothing on: existence is not disclosed.
		http.Error(w, "no such MCP endpoint for this agent: /mcp/"+r.PathValue("surface"), http.StatusNotFound)
		return
	}
	e.ServeHTTP(w, r)
}

// endpoint returns agent's streamable HTTP endpoint on a surface, built
// on first use: each (agent, surface) has its own session table, so a
// session id issued to one agent means nothing under another's token. ok
// is false when the surface does not exist or the agent holds nothing
// there.
func (g *Gateway) endpoint(ctx context.Context, agent, surfaceID string) (*mcpserve.Endpoint, bool) {
	// Asked on every request: the revision in force may have taken the
	// surface or the agent's grants away since the endpoint was built.
	if !g.serves(ctx, agent, surfaceID) {
		return nil, false
	}
	key := endpointKey{agent, surfaceID}
	if e, ok := g.endpoints.Load(key); ok {
		return e.(*mcpserve.Endpoint), true
	}
	opts, ok := g.serveOptions(ctx, agent, surfaceID)
	if !ok {
		return nil, false
	}
	e := mcpserve.NewEndpoint(opts)
	actual, loaded := g.endpoints.LoadOrStore(key, e)
	if loaded {
		e.Close()
	}
	return actual.(*mcpserve.Endpoint), true
}

// isJSONBody reports whether a request says its body is JSON.
func isJSONBody(r *http.Request) bool {
	ct, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && ct == "application/json"
}
