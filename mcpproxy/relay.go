package mcpproxy

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// ToolCall is one tools/call of the client, handed to the gateway to
// decide. Params are the client's params as it sent them (strictly valid
// JSON); the gateway parses them once and calls Forward with the params it
// decided on — the relay never forwards the client's bytes of a tools/call.
type ToolCall struct {
	// ID is the client's request id; nil for a tools/call sent without
	// one, which must be refused (and audited) and is never forwarded.
	ID     json.RawMessage
	Params json.RawMessage
	// Client reaches the calling client (progress, elicitation).
	Client mcpwire.Client
	// Forward sends params as the tools/call of tool name to the server and
	// waits for its answer: the JSON-RPC result or error object, or err
	// when the server could not answer (crash, timeout, cancellation).
	Forward func(ctx context.Context, name string, params []byte) (result, rpcErr json.RawMessage, err error)
}

// HandleClient takes one message from the MCP client. Requests are served
// concurrently under a context of their own (ctx, ended early by the
// session's end or the client's notifications/cancelled); their answers go
// to the session's Peer routed by the request id.
func (s *Session) HandleClient(ctx context.Context, m *jsonrpc.Message) {
	switch m.Kind() {
	case jsonrpc.KindRequest:
		rctx, done := s.requests.Start(ctx, s.ctx, m.ID)
		s.workers.Go(func() {
			defer done()
			s.serve(rctx, m)
		})
	case jsonrpc.KindNotification:
		switch {
		case m.Method == "tools/call":
			// No id: refused and audited by the gateway, never forwarded
			// (a session of the proxy's own drops it).
			if s.hooks.CallTool != nil {
				s.hooks.CallTool(ctx, ToolCall{Params: m.Params, Client: s.client()})
			}
		case mcpwire.IsNotificationMethod(m.Method):
			s.clientNotification(m)
		}
	case jsonrpc.KindResponse:
		s.clientResponse(m)
	}
}

// client describes the calling client to the gateway.
func (s *Session) client() mcpwire.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mcpwire.Client{Peer: s.up, Outbound: s.outbound, Version: s.version, Capabilities: s.clientCaps}
}

// serve answers one client request.
func (s *Session) serve(ctx context.Context, m *jsonrpc.Message) {
	var result, rpcErr json.RawMessage
	switch m.Method {
	case "initialize":
		result, rpcErr = s.initialize(ctx, m)
	case "tools/call":
		forward := func(ctx context.Context, name string, params []byte) (json.RawMessage, json.RawMessage, error) {
			r := s.roundTrip(ctx, &jsonrpc.Message{Method: m.Method, Params: params}, m.ID, s.cfg.RequestTimeout(name), false)
			return r.result, r.rpcErr, r.err
		}
		if s.hooks.CallTool == nil {
			// A session of the proxy's own (dialSession): no client's call
			// crosses it undecided.
			rpcErr = jsonrpc.ErrorObject(jsonrpc.CodeInternalError, "tools/call refused: this session has no CallTool hook to decide it")
			break
		}
		result, rpcErr = s.hooks.CallTool(ctx, ToolCall{ID: m.ID, Params: m.Params, Client: s.client(), Forward: forward})
	default:
		r := s.roundTrip(ctx, m, m.ID, s.cfg.RequestTimeout(""), false)
		result, rpcErr = r.result, r.rpcErr
		if r.err != nil {
			rpcErr = jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, r.err.Error())
		}
		if rpcErr == nil {
			s.remember(m)
			if m.Method == "tools/list" && s.hooks.ToolsList != nil {
				result = s.hooks.ToolsList(result)
			}
		}
	}
	if rpcErr == nil && result == nil {
		rpcErr = jsonrpc.ErrorObject(jsonrpc.CodeInternalError, "no answer")
	}
	s.up.Send((&jsonrpc.Message{ID: m.ID, Result: result, Error: rpcErr}).Encode(), m.ID, false)
}

// initialize forwards the client's handshake (with the protocol version
// pinned when the server declares one), keeps it to replay after a
// restart, and notes what the client can do.
func (s *Session) initialize(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, json.RawMessage) {
	params := m.Params
	if s.cfg.ProtocolVersion != "" {
		if f, err := jsonrpc.ParseFields(params); err == nil {
			params = f.Set("protocolVersion", jsonrpc.Quote(s.cfg.ProtocolVersion)).Encode()
		}
	}
	r := s.roundTrip(ctx, &jsonrpc.Message{Method: m.Method, Params: params}, m.ID, s.cfg.RequestTimeout(""), false)
	if (r.err != nil || r.rpcErr != nil) && ctx.Err() == nil && s.hooks.EraRefused != nil {
		// The era probe said the server takes sessions; it may no longer.
		s.hooks.EraRefused(mcpwire.EraLegacy)
	}
	if r.err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, r.err.Error())
	}
	if r.rpcErr == nil {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(r.result, &res)
		s.mu.Lock()
		s.initParams = params
		s.version = res.ProtocolVersion
		s.clientCaps = jsonrpc.Field(m.Params, "capabilities")
		conn := s.conn
		s.mu.Unlock()
		if conn != nil {
			conn.SetProtocolVersion(res.ProtocolVersion)
		}
	}
	return r.result, r.rpcErr
}

// remember keeps requests that set session state, to replay after a
// restart.
func (s *Session) remember(m *jsonrpc.Message) {
	switch m.Method {
	case "logging/setLevel":
		s.mu.Lock()
		s.replay["log"] = m
		s.mu.Unlock()
	case "resources/subscribe", "resources/unsubscribe":
		uri := string(jsonrpc.Field(m.Params, "uri"))
		s.mu.Lock()
		if m.Method == "resources/subscribe" {
			s.replay["sub:"+uri] = m
		} else {
			delete(s.replay, "sub:"+uri)
		}
		s.mu.Unlock()
	}
}

func toolName(params json.RawMessage) string {
	var name string
	_ = json.Unmarshal(jsonrpc.Field(params, "name"), &name)
	return name
}

// clientNotification relays a notification of the client. The client's
// notifications/cancelled ends the request's context instead: the relay
// then tells the server under its own id, and stops waiting.
func (s *Session) clientNotification(m *jsonrpc.Message) {
	if m.Method == "notifications/cancelled" {
		s.requests.Cancel(m.Params)
		return
	}
	s.sendDown(m.Encode())
}

func (s *Session) clientResponse(m *jsonrpc.Message) {
	if s.outbound.Deliver(m) {
		return
	}
	s.mu.Lock()
	req, ok := s.serverReqs[jsonrpc.IDKey(m.ID)]
	if ok {
		delete(s.serverReqs, jsonrpc.IDKey(m.ID))
		delete(s.serverIDs, jsonrpc.IDKey(req.id))
	}
	gen := s.gen
	s.mu.Unlock()
	if !ok || req.gen != gen {
		return
	}
	s.sendDown((&jsonrpc.Message{ID: req.id, Result: m.Result, Error: m.Error}).Encode())
}

func (s *Session) sendDown(msg []byte) {
	s.mu.Lock()
	conn, ready := s.conn, s.ready
	s.mu.Unlock()
	if conn == nil || !ready {
		return
	}
	if err := conn.Send(s.ctx, msg, nil); err != nil {
		s.log.Debug("message to mcp server not delivered", "err", err)
	}
}

// fromServer relays one message from the server.
func (s *Session) fromServer(in transport.Incoming) {
	m, err := jsonrpc.ParseMessage(in.Msg)
	if err != nil {
		s.log.Debug("mcp server sent an invalid message", "err", err)
		return
	}
	switch m.Kind() {
	case jsonrpc.KindResponse:
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		s.mu.Lock()
		p, ok := s.pending[id]
		if ok {
			s.forget(id, p)
		}
		s.mu.Unlock()
		if ok {
			p.ch <- reply{result: m.Result, rpcErr: m.Error}
		}
	case jsonrpc.KindRequest:
		s.mu.Lock()
		s.nextUpID++
		upID := jsonrpc.IntID(s.nextUpID)
		s.serverReqs[jsonrpc.IDKey(upID)] = serverReq{id: m.ID, gen: s.gen}
		s.serverIDs[jsonrpc.IDKey(m.ID)] = jsonrpc.IDKey(upID)
		route := s.routeLocked(in.Via, nil)
		s.mu.Unlock()
		s.up.Send((&jsonrpc.Message{ID: upID, Method: m.Method, Params: m.Params}).Encode(), route, false)
	case jsonrpc.KindNotification:
		s.serverNotification(m, in)
	}
}

// routeLocked finds the client request a server message belongs to: the
// request whose response stream carried it, else the owner of its
// progress token. s.mu must be held.
func (s *Session) routeLocked(via, token json.RawMessage) json.RawMessage {
	if token != nil {
		if r, ok := s.tokens[jsonrpc.IDKey(token)]; ok && r != nil {
			return r
		}
	}
	if via != nil {
		if id, err := strconv.ParseInt(string(via), 10, 64); err == nil {
			if p, ok := s.pending[id]; ok {
				return p.clientID
			}
		}
	}
	return nil
}

func (s *Session) serverNotification(m *jsonrpc.Message, in transport.Incoming) {
	switch m.Method {
	case "notifications/progress":
		s.mu.Lock()
		route := s.routeLocked(in.Via, jsonrpc.Field(m.Params, "progressToken"))
		s.mu.Unlock()
		s.up.Send(m.Encode(), route, true)
	case "notifications/cancelled":
		f, err := jsonrpc.ParseFields(m.Params)
		if err != nil {
			return
		}
		s.mu.Lock()
		upID, ok := s.serverIDs[jsonrpc.IDKey(f.Get("requestId"))]
		route := s.routeLocked(in.Via, nil)
		s.mu.Unlock()
		if !ok {
			return
		}
		out := &jsonrpc.Message{Method: m.Method, Params: f.Set("requestId", json.RawMessage(upID)).Encode()}
		s.up.Send(out.Encode(), route, true)
	case "notifications/tools/list_changed":
		// It may belong to a subscriptions/listen stream (2026-07-28).
		route := s.subscriptionRoute(m, in)
		if s.hooks.ToolsChanged == nil {
			s.up.Send(m.Encode(), route, true)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.hooks.ToolsChanged(s.ctx, s)
			s.up.Send(m.Encode(), route, true)
		}()
	default:
		s.up.Send(m.Encode(), s.subscriptionRoute(m, in), true)
	}
}

// subscriptionRoute finds the client request a server notification
// belongs to: the request whose stream carried it, or (on stdio) the
// subscriptions/listen request its _meta names by our id.
func (s *Session) subscriptionRoute(m *jsonrpc.Message, in transport.Incoming) json.RawMessage {
	via := in.Via
	if sub := jsonrpc.Field(jsonrpc.Field(m.Params, "_meta"), mcpwire.MetaSubscriptionID); sub != nil && via == nil {
		via = sub
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.routeLocked(via, nil)
}
