package gateway

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
)

// packSession serves one client session of one agent on a pack surface:
// initialize, ping, tools/list from the agent's view, and tools/call
// through the one entry (callTool). It implements mcpserve.Session.
type packSession struct {
	g     *Gateway
	agent string
	s     *surface
	peer  mcpwire.Peer
	out   *jsonrpc.Outbound
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
	reqs  mcpwire.Requests

	mu      sync.Mutex
	version string
	caps    json.RawMessage
}

// packSessions is the session factory of agent on pack s.
func (g *Gateway) packSessions(agent string, s *surface) mcpserve.Factory {
	return func(_ context.Context, peer mcpwire.Peer) (mcpserve.Session, error) {
		ctx, stop := context.WithCancel(context.Background())
		return &packSession{g: g, agent: agent, s: s, peer: peer, out: jsonrpc.NewOutbound("tg-"), ctx: ctx, stop: stop}, nil
	}
}

// HandleClient implements mcpserve.Session.
func (ps *packSession) HandleClient(ctx context.Context, m *jsonrpc.Message) {
	switch m.Kind() {
	case jsonrpc.KindRequest:
		rctx, done := ps.reqs.Start(ctx, ps.ctx, m.ID)
		ps.wg.Add(1)
		go func() {
			defer ps.wg.Done()
			defer done()
			result, rpcErr := ps.serve(rctx, m)
			ps.peer.Send((&jsonrpc.Message{ID: m.ID, Result: result, Error: rpcErr}).Encode(), m.ID, false)
		}()
	case jsonrpc.KindNotification:
		switch m.Method {
		case "tools/call":
			// No id: refused and audited, never run; the transport answers.
			ps.g.callTool(ctx, ps.agent, ps.s.pack.ID, nil, m.Params, ps.client(), nil, ps.g.packExecutor(ps.agent, ps.s))
		case "notifications/cancelled":
			ps.reqs.Cancel(m.Params)
		}
	case jsonrpc.KindResponse:
		ps.out.Deliver(m)
	}
}

// Close ends the session: requests in flight are cancelled and waited for.
func (ps *packSession) Close() error {
	ps.stop()
	ps.wg.Wait()
	return nil
}

func (ps *packSession) client() mcpwire.Client {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return mcpwire.Client{Peer: ps.peer, Outbound: ps.out, Version: ps.version, Capabilities: ps.caps}
}

func (ps *packSession) serve(ctx context.Context, m *jsonrpc.Message) (result, rpcErr json.RawMessage) {
	switch m.Method {
	case "initialize":
		return ps.initialize(m.Params), nil
	case "ping":
		return json.RawMessage(`{}`), nil
	case "tools/list":
		return ps.g.view(ps.agent, ps.s.pack.ID).list, nil
	case "tools/call":
		return ps.g.callTool(ctx, ps.agent, ps.s.pack.ID, m.ID, m.Params, ps.client(), nil, ps.g.packExecutor(ps.agent, ps.s))
	}
	return nil, jsonrpc.ErrorObject(jsonrpc.CodeMethodNotFound, "method not found: "+m.Method+" (a command pack surface serves tools only)")
}

// initialize negotiates the protocol version and notes what the client
// can do (elicitation).
func (ps *packSession) initialize(params json.RawMessage) json.RawMessage {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := mcpwire.NegotiateLegacy(p.ProtocolVersion)
	ps.mu.Lock()
	ps.version = version
	ps.caps = jsonrpc.Field(params, "capabilities")
	ps.mu.Unlock()
	return ps.g.initializeResult(version, ps.s.pack.ID)
}

// initializeResult is a pack surface's answer to initialize.
func (g *Gateway) initializeResult(version, surfaceID string) json.RawMessage {
	b := make([]byte, 0, 160)
	b = append(b, `{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":`...)
	b = appendJSONString(b, version)
	b = append(b, `,"serverInfo":{"name":`...)
	b = appendJSONString(b, "toolgate/"+surfaceID)
	b = append(b, `,"version":`...)
	b = appendJSONString(b, g.versionString())
	return append(b, `}}`...)
}
