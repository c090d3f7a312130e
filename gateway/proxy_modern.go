package gateway

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/redact"
)

// proxyModern serves the stateless (2026-07-28) requests of one agent on a
// proxied server, over the agent's forwarder: to a 2026-07-28 server as
// they are (its MRTR requestState untouched, its tasks routed back to it);
// to a legacy server over one session of toolgate's own, with results
// marked complete. tools/call passes the pipeline; tools/list is filtered
// and narrowed for the agent and so marked cacheScope private;
// server/discover is answered from what the agent may use.
type proxyModern struct {
	g     *Gateway
	agent string
	ps    *proxyServer
}

// Serve implements mcpserve.Handler.
func (h *proxyModern) Serve(ctx context.Context, m *jsonrpc.Message, req mcpserve.Request, out mcpwire.Peer) {
	out = redact.Peer(out, h.g.runner.Redactor(), h.g.log)
	result, rpcErr := h.serve(ctx, m, req, out)
	if result == nil && rpcErr == nil {
		return
	}
	if result != nil {
		result = modernResult(result)
	}
	out.Send((&jsonrpc.Message{ID: m.ID, Result: result, Error: rpcErr}).Encode(), m.ID, false)
}

func (h *proxyModern) serve(ctx context.Context, m *jsonrpc.Message, req mcpserve.Request, out mcpwire.Peer) (json.RawMessage, json.RawMessage) {
	g, ps := h.g, h.ps
	f, err := g.forwarder(ctx, h.agent, ps)
	if err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, "server "+ps.id+" is unavailable: "+err.Error())
	}
	notify := func(msg []byte) { out.Send(msg, m.ID, true) }
	switch m.Method {
	case "server/discover":
		return g.proxyDiscover(ctx, ps), nil
	case "tools/call":
		if rpcErr := g.checkParamHeaders(ctx, h.agent, ps, m, req); rpcErr != nil {
			return nil, rpcErr
		}
		exec := proxyExecutor{g: g, server: ps.id, forward: func(ctx context.Context, name string, params []byte) (json.RawMessage, json.RawMessage, error) {
			return f.Do(ctx, "tools/call", name, params, notify)
		}}
		hold := modernHold{g: g, agent: h.agent, surface: ps.id, provider: callpipe.MCP, req: req}
		result, rpcErr := g.callTool(ctx, h.agent, ps.id, m.ID, m.Params, req.Client(out), hold, exec)
		if rpcErr == nil && string(jsonrpc.Field(result, "resultType")) == `"task"` && jsonrpc.Field(result, "taskId") != nil {
			// A task the server created: routed back to it, for this agent.
			result = g.adoptTask(ctx, h.agent, ps.id, result)
		}
		return result, rpcErr
	case "tasks/get", "tasks/update", "tasks/cancel":
		return g.taskOp(ctx, h.agent, callpipe.MCP, ps.id, m, req, func(ctx context.Context, params json.RawMessage) (json.RawMessage, json.RawMessage, error) {
			return f.Do(ctx, m.Method, "", params, notify)
		})
	case "subscriptions/listen":
		// The stream's notifications name the subscription by the id of
		// the request that opened it: the client's, not the relay's.
		sub := json.RawMessage(subscriptionMeta(m.ID))
		result, rpcErr, err := f.Do(ctx, m.Method, "", m.Params, func(msg []byte) { out.Send(withSubscription(msg, sub), m.ID, true) })
		if ctx.Err() != nil {
			return nil, nil
		}
		if err != nil {
			return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, err.Error())
		}
		if result != nil {
			result = withMeta(result, sub)
		}
		return result, rpcErr
	}
	result, rpcErr, err := f.Do(ctx, m.Method, "", m.Params, notify)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil
		}
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, err.Error())
	}
	if rpcErr == nil && m.Method == "tools/list" {
		result = mcpwire.SetResultMembers(g.filterTools(h.agent, ps, result), "cacheScope", `"private"`)
	}
	return result, rpcErr
}

// Notify implements mcpserve.Handler: a tools/call without an id is
// refused and audited; other notifications of a stateless client are
// forwarded.
func (h *proxyModern) Notify(ctx context.Context, m *jsonrpc.Message, req mcpserve.Request) {
	if m.Method == "tools/call" {
		h.g.callTool(ctx, h.agent, h.ps.id, nil, m.Params, mcpwire.Client{Version: req.Version}, nil, proxyExecutor{g: h.g, server: h.ps.id})
	}
}

// proxyDiscover answers server/discover for a proxied server: its own
// DiscoverResult when it is a 2026-07-28 server, marked private (the
// agent's view), else one built by toolgate.
func (g *Gateway) proxyDiscover(ctx context.Context, ps *proxyServer) json.RawMessage {
	if discover := g.serverDiscover(ctx, ps); discover != nil {
		// Every version is served on this endpoint (toolgate bridges the
		// eras), so every version is listed — as the unsupported-version
		// error lists them too.
		d := mcpwire.SetResultMembers(discover, "cacheScope", `"private"`, "supportedVersions", string(mcpwire.AppendVersionList(nil)))
		return withGatewayExtensions(d)
	}
	return g.discoverResult(ps.id)
}

// withGatewayExtensions adds the extensions toolgate serves itself (a held
// call is a task of toolgate's, whatever the server supports) to a
// server's DiscoverResult, keeping the server's own.
func withGatewayExtensions(discover json.RawMessage) json.RawMessage {
	f, err := jsonrpc.ParseFields(discover)
	if err != nil {
		return discover
	}
	caps, _ := jsonrpc.ParseFields(f.Get("capabilities"))
	ext, _ := jsonrpc.ParseFields(caps.Get("extensions"))
	add, _ := jsonrpc.ParseFields(json.RawMessage(gatewayExtensions))
	for _, kv := range add {
		ext = ext.Set(kv.Key, kv.Value)
	}
	return f.Set("capabilities", caps.Set("extensions", ext.Encode()).Encode()).Encode()
}

// withSubscription sets a notification's _meta subscriptionId.
func withSubscription(msg []byte, sub json.RawMessage) []byte {
	m, err := jsonrpc.ParseMessage(msg)
	if err != nil || m.Method == "" {
		return msg
	}
	m.Params = withMeta(m.Params, sub)
	return m.Encode()
}

// withMeta merges the members of meta into obj's _meta.
func withMeta(obj json.RawMessage, meta json.RawMessage) json.RawMessage {
	f, err := jsonrpc.ParseFields(obj)
	if err != nil {
		if len(obj) != 0 {
			return obj
		}
		f = nil
	}
	cur, _ := jsonrpc.ParseFields(f.Get("_meta"))
	add, _ := jsonrpc.ParseFields(meta)
	for _, kv := range add {
		cur = cur.Set(kv.Key, kv.Value)
	}
	return f.Set("_meta", cur.Encode()).Encode()
}

// checkParamHeaders validates the Mcp-Param-* headers of a 2026-07-28
// HTTP tools/call against its body, for a tool whose schema mirrors
// arguments into headers (intermediaries may route on them: they must say
// what the body says). A mismatch is refused -32020 — and audited, as a
// call that was not run.
func (g *Gateway) checkParamHeaders(ctx context.Context, agent string, ps *proxyServer, m *jsonrpc.Message, req mcpserve.Request) json.RawMessage {
	if req.Header == nil {
		return nil
	}
	var name string
	_ = json.Unmarshal(jsonrpc.Field(m.Params, "name"), &name)
	def := ps.headerTool(name)
	if def == nil {
		return nil
	}
	if err := mcp.ValidateParamHeaders(req.Header, def, m.Params); err != nil {
		g.refusedCall(agent, callpipe.MCP, ps.id)(ctx, err)
		return jsonrpc.ErrorObject(jsonrpc.CodeHeaderMismatch, "Header mismatch: "+err.Error())
	}
	return nil
}
