package gateway

import (
	"context"
	"fmt"
	"io"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/mcpserve"
)

// ServeStdio speaks MCP over in/out for one agent and one surface: what a
// harness launches as `toolgate serve --agent A --stdio --surface S`.
func (g *Gateway) ServeStdio(ctx context.Context, agent, surfaceID string, in io.Reader, out io.Writer) error {
	if !g.agentExists(agent) {
		return fmt.Errorf("agent %q is not declared in %s", agent, g.ws.Path)
	}
	opts, ok := g.serveOptions(ctx, agent, surfaceID)
	if !ok {
		if err := g.unavailable(agent, surfaceID); err != nil {
			return err
		}
		return fmt.Errorf("agent %q holds no tool on surface %q; `toolgate check -w %s` lists what it may call", agent, surfaceID, g.ws.Path)
	}
	return mcpserve.ServeStdio(ctx, opts, in, out)
}

// serveOptions say how agent's clients are served on a surface, in both
// protocol eras: a session per initialize (legacy) and a stateless handler
// for 2026-07-28 requests. ok is false when the surface does not exist or
// the agent holds nothing there (the same answer either way, so existence
// is not disclosed). Every transport (HTTP endpoint, stdio) is built from
// these, so both eras are served on every endpoint.
func (g *Gateway) serveOptions(ctx context.Context, agent, surfaceID string) (mcpserve.Options, bool) {
	if !g.serves(ctx, agent, surfaceID) {
		return mcpserve.Options{}, false
	}
	sessions := g.ws.Gateway.Sessions
	opts := mcpserve.Options{
		IdleTTL:     sessions.IdleTTLOrDefault(),
		MaxSessions: sessions.MaxPerAgentOrDefault(),
		Streams:     g.streams.For(agent),
		Logger:      g.log.With("surface", surfaceID, "agent", agent),
	}
	if ps := g.proxy.server(surfaceID); ps != nil {
		opts.Refused = g.refusedCall(agent, callpipe.MCP, surfaceID)
		if !g.servesAgent(ctx, agent, ps) {
			return mcpserve.Options{}, false
		}
		opts.Legacy = countSessions(g.sessionFactory(agent, ps), g.metrics.Surface(surfaceID))
		opts.Modern = &proxyModern{g: g, agent: agent, ps: ps}
		return opts, true
	}
	s, ok := g.surface(surfaceID)
	if !ok || !g.view(agent, surfaceID).holds() {
		return mcpserve.Options{}, false
	}
	opts.Legacy = countSessions(g.packSessions(agent, s), g.metrics.Surface(surfaceID))
	opts.Refused = g.refusedCall(agent, callpipe.Command, surfaceID)
	opts.Modern = packModern{g: g, agent: agent, s: s}
	return opts, true
}

// serves reports whether agent is served on a surface: serveOptions' ok,
// without building the options (an endpoint already built asks it on
// every request).
func (g *Gateway) serves(ctx context.Context, agent, surfaceID string) bool {
	if ps := g.proxy.server(surfaceID); ps != nil {
		return g.servesAgent(ctx, agent, ps)
	}
	_, ok := g.surface(surfaceID)
	return ok && g.view(agent, surfaceID).holds()
}

// refusedCall audits a tools/call the transport refused before the
// pipeline could read it (an ambiguous envelope, wrong 2026-07-28
// headers): one refused decision, like any malformed call.
func (g *Gateway) refusedCall(agent string, provider callpipe.Provider, surface string) func(context.Context, error) {
	return func(ctx context.Context, why error) {
		g.pipe.Call(ctx, callpipe.Request{Agent: agent, Provider: provider, Surface: surface, ParseErr: why, Name: "?"})
	}
}
