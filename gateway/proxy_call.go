package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/tiers"
)

// callServerTool runs the DESIGN.md §5 pipeline for one proxied tools/call:
// decide, forward what is allowed (a refused call never reaches the
// server), audit every outcome as mcp:call:{server}:{tool}. It returns the
// JSON-RPC result for the client, or the server's JSON-RPC error as is.
func (g *Gateway) callServerTool(ctx context.Context, agent, server string, params json.RawMessage, forward mcpproxy.Forward) (json.RawMessage, json.RawMessage) {
	var p struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, rpcError(mcpproxy.CodeInvalidParams, "tools/call params: "+err.Error())
	}
	args := p.Arguments
	if args == nil {
		args = map[string]any{}
	}
	d := g.Policy().Decide(agent, server, p.Name, args)
	ev := &audit.Event{
		Agent:      agent,
		Action:     "mcp:call:" + server + ":" + p.Name,
		Decision:   string(d.Outcome),
		Reason:     d.Reason,
		Tier:       string(d.Tier),
		Payload:    audit.Payload{Provider: "mcp", Container: server, Member: p.Name, Effects: string(d.Effects)},
		ArgsSHA256: audit.ArgsDigest(args),
	}
	g.log.Info("decision", "agent", agent, "action", ev.Action, "decision", d.Outcome, "tier", d.Tier)
	g.log.Debug("decision reason", "agent", agent, "action", ev.Action, "reason", d.Reason)
	switch d.Outcome {
	case tiers.Allow:
	case tiers.Approval:
		if r := g.awaitApproval(ctx, ev, d, args, nil); r != nil {
			return toolResultJSON(r)
		}
	default:
		return toolResultJSON(g.refuse(ev, d.Reason))
	}
	if r := g.refuseWhileAuditFails(ev); r != nil {
		return toolResultJSON(r)
	}

	start := time.Now()
	result, rpcErr, err := forward(ctx)
	dur := time.Since(start).Milliseconds()
	ev.DurationMS = &dur
	switch {
	case err != nil:
		ev.Error = err.Error()
		if aerr := g.appendAudit(ev); aerr != nil {
			return toolResultJSON(auditFailure(aerr))
		}
		return toolResultJSON(mcp.NewToolResultError(fmt.Sprintf("%s:%s failed: %v", server, p.Name, err)))
	case rpcErr != nil:
		var e mcpproxy.RPCError
		_ = json.Unmarshal(rpcErr, &e)
		ev.Error = fmt.Sprintf("server answered with JSON-RPC error %d: %s", e.Code, e.Message)
	default:
		out, trunc := int64(len(result)), false
		ev.OutputBytes, ev.Truncated = &out, &trunc
		var r struct {
			IsError bool `json:"isError"`
		}
		if json.Unmarshal(result, &r) == nil && r.IsError {
			ev.Error = "the tool reported an error (isError)"
		}
	}
	if aerr := g.appendAudit(ev); aerr != nil {
		return toolResultJSON(auditFailure(aerr))
	}
	return result, rpcErr
}

func toolResultJSON(r *mcp.CallToolResult) (json.RawMessage, json.RawMessage) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, rpcError(mcpproxy.CodeInternalError, err.Error())
	}
	return b, nil
}

func rpcError(code int, msg string) json.RawMessage {
	b, _ := json.Marshal(mcpproxy.RPCError{Code: code, Message: msg})
	return b
}
