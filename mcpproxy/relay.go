package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// HandleClient takes one message from the MCP client. Requests are served
// concurrently; their answers go to the Upstream routed by the request id.
func (s *Session) HandleClient(m *Message) {
	switch m.Kind() {
	case KindRequest:
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serve(m)
		}()
	case KindNotification:
		s.clientNotification(m)
	case KindResponse:
		s.clientResponse(m)
	}
}

// serve answers one client request.
func (s *Session) serve(m *Message) {
	var result, rpcErr json.RawMessage
	switch m.Method {
	case "initialize":
		result, rpcErr = s.initialize(m)
	case "tools/call":
		forward := func(ctx context.Context) (json.RawMessage, json.RawMessage, error) {
			r := s.roundTrip(ctx, m, m.ID, s.cfg.timeout(toolName(m.Params)), false)
			return r.result, r.rpcErr, r.err
		}
		if s.hooks.CallTool != nil {
			result, rpcErr = s.hooks.CallTool(s.ctx, m.Params, forward)
		} else {
			var err error
			if result, rpcErr, err = forward(s.ctx); err != nil {
				rpcErr = errorJSON(CodeUnavailable, err.Error())
			}
		}
	default:
		r := s.roundTrip(s.ctx, m, m.ID, s.cfg.timeout(""), false)
		result, rpcErr = r.result, r.rpcErr
		if r.err != nil {
			rpcErr = errorJSON(CodeUnavailable, r.err.Error())
		}
		if rpcErr == nil {
			s.remember(m)
			if m.Method == "tools/list" && s.hooks.ToolsList != nil {
				result = s.hooks.ToolsList(result)
			}
		}
	}
	s.up.Send((&Message{ID: m.ID, Result: result, Error: rpcErr}).Encode(), m.ID, false)
}

// initialize forwards the client's handshake (with the protocol version
// pinned when the server declares one) and keeps it to replay after a
// restart.
func (s *Session) initialize(m *Message) (json.RawMessage, json.RawMessage) {
	params := m.Params
	if s.cfg.ProtocolVersion != "" {
		if f, err := ParseFields(params); err == nil {
			v, _ := json.Marshal(s.cfg.ProtocolVersion)
			params = f.Set("protocolVersion", v).Encode()
		}
	}
	r := s.roundTrip(s.ctx, &Message{Method: m.Method, Params: params}, m.ID, s.cfg.timeout(""), false)
	if r.err != nil {
		return nil, errorJSON(CodeUnavailable, r.err.Error())
	}
	if r.rpcErr == nil {
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		_ = json.Unmarshal(r.result, &res)
		s.mu.Lock()
		s.initParams = params
		s.version = res.ProtocolVersion
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
func (s *Session) remember(m *Message) {
	switch m.Method {
	case "logging/setLevel":
		s.mu.Lock()
		s.replay["log"] = m
		s.mu.Unlock()
	case "resources/subscribe", "resources/unsubscribe":
		uri := string(paramsField(m.Params, "uri"))
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
	var p struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Name
}

func (s *Session) clientNotification(m *Message) {
	msg := m
	if m.Method == "notifications/cancelled" {
		// The client names its own request id; the server knows it by ours.
		f, err := ParseFields(m.Params)
		if err != nil {
			return
		}
		s.mu.Lock()
		id, ok := s.byClientID[idKey(f.Get("requestId"))]
		p := s.pending[id]
		if ok && p != nil {
			s.forget(id, p)
		}
		s.mu.Unlock()
		if !ok {
			return
		}
		if p != nil {
			// The client will ignore any answer; stop waiting for one.
			p.ch <- reply{err: fmt.Errorf("cancelled by the client")}
		}
		msg = &Message{Method: m.Method, Params: f.Set("requestId", json.RawMessage(strconv.AppendInt(nil, id, 10))).Encode()}
	}
	s.sendDown(msg.Encode())
}

func (s *Session) clientResponse(m *Message) {
	s.mu.Lock()
	req, ok := s.serverReqs[idKey(m.ID)]
	if ok {
		delete(s.serverReqs, idKey(m.ID))
		delete(s.serverIDs, idKey(req.id))
	}
	gen := s.gen
	s.mu.Unlock()
	if !ok || req.gen != gen {
		return
	}
	s.sendDown((&Message{ID: req.id, Result: m.Result, Error: m.Error}).Encode())
}

func (s *Session) sendDown(msg []byte) {
	s.mu.Lock()
	conn, ready := s.conn, s.ready
	s.mu.Unlock()
	if conn == nil || !ready {
		return
	}
	if err := conn.Send(s.ctx, msg, nil); err != nil {
		s.log.Debug("message to mcp server not delivered", "server", s.cfg.ID, "err", err)
	}
}

// fromServer relays one message from the server.
func (s *Session) fromServer(in Incoming) {
	m, err := ParseMessage(in.Msg)
	if err != nil {
		s.log.Debug("mcp server sent an invalid message", "server", s.cfg.ID, "err", err)
		return
	}
	switch m.Kind() {
	case KindResponse:
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
	case KindRequest:
		s.mu.Lock()
		s.nextUpID++
		upID := json.RawMessage(strconv.AppendInt(nil, s.nextUpID, 10))
		s.serverReqs[idKey(upID)] = serverReq{id: m.ID, gen: s.gen}
		s.serverIDs[idKey(m.ID)] = idKey(upID)
		route := s.routeLocked(in.Via, nil)
		s.mu.Unlock()
		s.up.Send((&Message{ID: upID, Method: m.Method, Params: m.Params}).Encode(), route, false)
	case KindNotification:
		s.serverNotification(m, in)
	}
}

// routeLocked finds the client request a server message belongs to: the
// request whose response stream carried it, else the owner of its
// progress token. s.mu must be held.
func (s *Session) routeLocked(via, token json.RawMessage) json.RawMessage {
	if token != nil {
		if r, ok := s.tokens[idKey(token)]; ok && r != nil {
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

func (s *Session) serverNotification(m *Message, in Incoming) {
	switch m.Method {
	case "notifications/progress":
		s.mu.Lock()
		route := s.routeLocked(in.Via, paramsField(m.Params, "progressToken"))
		s.mu.Unlock()
		s.up.Send(in.Msg, route, true)
	case "notifications/cancelled":
		f, err := ParseFields(m.Params)
		if err != nil {
			return
		}
		s.mu.Lock()
		upID, ok := s.serverIDs[idKey(f.Get("requestId"))]
		route := s.routeLocked(in.Via, nil)
		s.mu.Unlock()
		if !ok {
			return
		}
		out := &Message{Method: m.Method, Params: f.Set("requestId", json.RawMessage(upID)).Encode()}
		s.up.Send(out.Encode(), route, true)
	case "notifications/tools/list_changed":
		if s.hooks.ToolsChanged == nil {
			s.up.Send(in.Msg, nil, true)
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.hooks.ToolsChanged(s.ctx, s)
			s.up.Send(in.Msg, nil, true)
		}()
	default:
		s.mu.Lock()
		route := s.routeLocked(in.Via, nil)
		s.mu.Unlock()
		s.up.Send(in.Msg, route, true)
	}
}
