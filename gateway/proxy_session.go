package gateway

import (
	"context"
	"encoding/json"

	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/redact"
)

// sessionFactory starts the relay of one client session of agent.
func (g *Gateway) sessionFactory(agent string, ps *proxyServer) mcpserve.Factory {
	return func(ctx context.Context, up mcpwire.Peer) (mcpserve.Session, error) {
		up = redact.Peer(up, g.runner.Redactor(), g.log)
		era, discover, err := g.erasOf(ps).Get(ctx)
		if err != nil {
			return nil, err
		}
		if era == mcpwire.EraModern {
			// A legacy client in front of a server that refuses initialize
			// (whatever its discover lists): bridged.
			return mcpproxy.NewBridge(ctx, ps.stateless, up, g.proxyHooks(agent, ps), discover)
		}
		hooks := g.proxyHooks(agent, ps)
		ps.watcher.Start(ps.cfg, g.clientInfo(), hooks.ToolsChanged)
		return mcpproxy.NewSession(ctx, ps.cfg, up, hooks)
	}
}

// servesAgent lists the server's tools if nobody has yet, then reports
// whether agent may call anything on it.
func (g *Gateway) servesAgent(ctx context.Context, agent string, ps *proxyServer) bool {
	g.ensureListed(ctx, ps)
	return g.view(agent, ps.id).holds()
}

// proxyHooks govern one client session of agent on server ps.
func (g *Gateway) proxyHooks(agent string, ps *proxyServer) mcpproxy.Hooks {
	return mcpproxy.Hooks{
		ToolsList: func(result json.RawMessage) json.RawMessage { return g.filterTools(agent, ps, result) },
		CallTool: func(ctx context.Context, call mcpproxy.ToolCall) (json.RawMessage, json.RawMessage) {
			return g.callTool(ctx, agent, ps.id, call.ID, call.Params, call.Client, nil, proxyExecutor{g: g, server: ps.id, forward: call.Forward})
		},
		ToolsChanged: func(ctx context.Context, s *mcpproxy.Session) {
			list := func(ctx context.Context) ([]json.RawMessage, error) {
				if s != nil {
					return s.ListTools(ctx)
				}
				cfg, _, err := g.eraConfig(ctx, ps)
				if err != nil {
					return nil, err
				}
				return mcpproxy.ListTools(ctx, cfg, g.clientInfo())
			}
			raws, err := list(ctx)
			g.downstreamUp(ps.id, err)
			if err != nil {
				g.log.Warn("could not re-list an MCP server's tools after a change", "server", ps.id, "err", err)
				return
			}
			g.setServerTools(ps, raws, true)
		},
		Health: func(err error) {
			ps.setDownstreamErr(err)
			g.downstreamUp(ps.id, err)
		},
		EraRefused: g.erasOf(ps).Failed,
	}
}
