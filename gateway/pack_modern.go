package gateway

import (
	"context"
	"encoding/json"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
)

// listTTL is the freshness hint (ttlMs) on the lists toolgate answers: an
// agent's tools change only when the workspace is reloaded, which
// subscriptions/listen announces.
const listTTL = "300000"

// packModern serves the stateless (2026-07-28) requests of one agent on a
// pack surface: server/discover and tools/list from the agent's own view
// (cacheScope private: the list is this agent's), tools/call through the
// pipeline, the tasks extension for held calls, subscriptions/listen.
type packModern struct {
	g     *Gateway
	agent string
	s     *surface
}

// Serve implements mcpserve.Handler.
func (h packModern) Serve(ctx context.Context, m *jsonrpc.Message, req mcpserve.Request, out mcpwire.Peer) {
	result, rpcErr := h.serve(ctx, m, req, out)
	if result == nil && rpcErr == nil {
		return // a stream that ended with its context (subscriptions/listen)
	}
	out.Send((&jsonrpc.Message{ID: m.ID, Result: result, Error: rpcErr}).Encode(), m.ID, false)
}

func (h packModern) serve(ctx context.Context, m *jsonrpc.Message, req mcpserve.Request, out mcpwire.Peer) (json.RawMessage, json.RawMessage) {
	g := h.g
	switch m.Method {
	case "server/discover":
		return g.discoverResult(h.s.pack.ID), nil
	case "tools/list":
		return g.view(h.agent, h.s.pack.ID).modernList, nil
	case "tools/call":
		hold := modernHold{g: g, agent: h.agent, surface: h.s.pack.ID, provider: callpipe.Command, req: req}
		res, rpcErr := g.callTool(ctx, h.agent, h.s.pack.ID, m.ID, m.Params, req.Client(out), hold, g.packExecutor(h.agent, h.s))
		if rpcErr != nil {
			return nil, rpcErr
		}
		return modernResult(res), nil
	case "tasks/get", "tasks/update", "tasks/cancel":
		return g.taskOp(ctx, h.agent, callpipe.Command, h.s.pack.ID, m, req, nil)
	case "subscriptions/listen":
		return g.listen(ctx, h.agent, h.s.pack.ID, m, req, out)
	}
	return nil, jsonrpc.ErrorObject(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method+" (a command pack surface serves tools only)")
}

// Notify implements mcpserve.Handler: a tools/call without an id is
// refused and audited; other notifications mean nothing here.
func (h packModern) Notify(ctx context.Context, m *jsonrpc.Message, req mcpserve.Request) {
	if m.Method == "tools/call" {
		h.g.callTool(ctx, h.agent, h.s.pack.ID, nil, m.Params, mcpwire.Client{Version: req.Version}, nil, h.g.packExecutor(h.agent, h.s))
	}
}

// gatewayExtensions are the extensions toolgate itself serves on every
// surface: tasks (a held call becomes one) and tool-approval (SEP-2848,
// tasks_approval.go).
const gatewayExtensions = `{"` + mcpwire.ExtensionTasks + `":{},"` + mcpwire.ExtensionToolApproval + `":{}}`

// discoverResult is server/discover of a surface: every version toolgate
// speaks, what the surface serves, and toolgate's identity.
func (g *Gateway) discoverResult(surfaceID string) json.RawMessage {
	b := []byte(`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":`)
	b = appendJSONString(b, "toolgate/"+surfaceID)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, g.versionString())
	b = append(b, `}},"cacheScope":"private","capabilities":{"extensions":`+gatewayExtensions+`,"tools":{"listChanged":true}},"resultType":"complete","supportedVersions":`...)
	b = mcpwire.AppendVersionList(b)
	return append(b, `,"ttlMs":`+listTTL+`}`...)
}
