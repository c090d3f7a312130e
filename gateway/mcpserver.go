package gateway

import (
	"context"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
)

// buildServer makes the MCP server that shows one pack to one agent: only
// the granted commands, under their own names, with narrowed schemas. A
// call to anything else gets the same "not found" answer whether or not it
// exists, and is audited as a refusal.
func (g *Gateway) buildServer(agent string, s *surface) *server.MCPServer {
	hooks := &server.Hooks{}
	hooks.AddOnError(func(ctx context.Context, _ any, method mcp.MCPMethod, message any, err error) {
		if method != mcp.MethodToolsCall || !errors.Is(err, server.ErrToolNotFound) {
			return
		}
		req, ok := message.(*mcp.CallToolRequest)
		if !ok {
			return
		}
		effects := ""
		if cmd, ok := s.commands[req.Params.Name]; ok {
			effects = string(cmd.Effects)
		}
		ev := &audit.Event{
			Agent:      agent,
			Action:     "command:call:" + s.pack.ID + ":" + req.Params.Name,
			Decision:   "deny",
			Reason:     grantcheck.UnknownToolReason(s.pack.ID, req.Params.Name),
			Payload:    audit.Payload{Provider: "command", Container: s.pack.ID, Member: req.Params.Name, Effects: effects},
			ArgsSHA256: audit.ArgsDigest(req.GetArguments()),
		}
		if err := g.appendAudit(ev); err != nil {
			g.log.Error("audit append failed for a refused call", "agent", agent, "surface", s.pack.ID, "err", err)
		}
	})
	srv := server.NewMCPServer("toolgate/"+s.pack.ID, g.version,
		server.WithToolCapabilities(false),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithToolHandlerMiddleware(callMetaMiddleware),
	)
	for _, v := range g.Policy().Tools(agent, s.pack.ID) {
		member := v.Name
		srv.AddTool(toolDefinition(v), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return g.callPack(ctx, agent, s, member, req.GetArguments()), nil
		})
	}
	srv.AddTools(g.jobTools(agent, s)...)
	return srv
}
