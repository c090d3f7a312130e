package gateway

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// DefaultMaxBody caps a request body when the workspace sets no max_body:
// MCP requests are small, and an unbounded body is a memory lever.
const DefaultMaxBody = 1 << 20

// sessionIdleTTL ends MCP sessions nobody has used for this long.
const sessionIdleTTL = 30 * time.Minute

// HTTPOptions choose how the HTTP endpoints identify agents.
type HTTPOptions struct {
	// Agent fixes the identity for a per-agent instance. Empty means the
	// daemon: every request must carry an agent's bearer token.
	Agent string
	// RequireToken makes a per-agent instance demand its agent's token too
	// (always on when listening beyond loopback).
	RequireToken bool
}

// Handler serves every surface at /mcp/<surface> over streamable HTTP.
func (g *Gateway) Handler(opts HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	h := &httpFront{g: g, opts: opts}
	mux.Handle("/mcp/{surface}", h)
	g.mountAdmin(mux)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux
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
	maxBody := int64(g.ws.Gateway.MaxBodyBytes)
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	if r.ContentLength > maxBody {
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)

	agent, ok := h.identify(w, r)
	if !ok {
		return
	}
	surfaceID := r.PathValue("surface")
	if ps := g.proxy.server(surfaceID); ps != nil {
		g.serveProxyHTTP(w, r, agent, ps)
		return
	}
	s, holds := g.packFor(agent, surfaceID)
	if !holds {
		// The same answer for a surface that does not exist and one this
		// agent holds nothing on: existence is not disclosed.
		http.Error(w, "no such MCP endpoint for this agent: /mcp/"+surfaceID, http.StatusNotFound)
		return
	}
	if g.interceptHTTP(w, r, agent, s) {
		return
	}
	hs, ok := g.httpServer(agent, surfaceID)
	if !ok {
		http.Error(w, "no such MCP endpoint for this agent: /mcp/"+surfaceID, http.StatusNotFound)
		return
	}
	hs.ServeHTTP(w, r)
}

// identify returns the calling agent, or answers 401 and returns false.
func (h *httpFront) identify(w http.ResponseWriter, r *http.Request) (string, bool) {
	tok := bearer(r)
	if h.opts.Agent != "" {
		if tok == "" && !h.opts.RequireToken {
			return h.opts.Agent, true
		}
		if h.g.tokens.lookup(tok) != h.opts.Agent {
			unauthorized(w, "this instance serves agent "+h.opts.Agent+" and the token presented is not its token")
			return "", false
		}
		return h.opts.Agent, true
	}
	if tok == "" {
		unauthorized(w, "send Authorization: Bearer <agent token>")
		return "", false
	}
	agent := h.g.tokens.lookup(tok)
	if agent == "" {
		unauthorized(w, "the bearer token is not any agent's token")
		return "", false
	}
	return agent, true
}

type httpKey struct{ agent, surface string }

// httpServer returns the streamable HTTP server of one (agent, surface).
// Each has its own stateful session table, so a session id issued to one
// agent is meaningless under another agent's token.
func (g *Gateway) httpServer(agent, surfaceID string) (*server.StreamableHTTPServer, bool) {
	key := httpKey{agent, surfaceID}
	if s, ok := g.httpServers.Load(key); ok {
		return s.(*server.StreamableHTTPServer), true
	}
	ms, ok := g.mcpServer(agent, surfaceID)
	if !ok {
		return nil, false
	}
	hs := server.NewStreamableHTTPServer(ms,
		server.WithEndpointPath("/mcp/"+surfaceID),
		server.WithStateful(true),
		server.WithSessionIdleTTL(sessionIdleTTL),
		server.WithStreamableHTTPLogger(g.log),
		// Origin and Host are checked by httpFront, against the
		// workspace's allowed origins.
		server.WithDisableLocalhostProtection(true),
	)
	actual, loaded := g.httpServers.LoadOrStore(key, hs)
	if loaded {
		_ = hs.Shutdown(context.Background())
	}
	return actual.(*server.StreamableHTTPServer), true
}

// IsLoopbackAddr reports whether a listen address binds loopback only.
func IsLoopbackAddr(addr string) bool {
	host := addr
	if i := strings.LastIndex(addr, ":"); i >= 0 {
		host = addr[:i]
	}
	return isLoopbackHost(host)
}
