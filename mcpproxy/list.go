package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// discardPeer is the client side of a session the proxy holds for
// itself.
type discardPeer struct{}

func (discardPeer) Send([]byte, json.RawMessage, bool) {}

// ClientInfo names the proxy when it speaks to a server on its own behalf.
type ClientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ProtocolVersion is the MCP version the proxy asks for on its own
// sessions (a server's protocol_version pin overrides it).
const ProtocolVersion = mcpwire.LatestLegacy

// ListTools opens a short-lived session of the proxy's own, pages through
// tools/list and returns every tool as the server wrote it. A stateless
// cfg (a 2026-07-28 server) needs no initialize: each request carries its
// _meta.
func ListTools(ctx context.Context, cfg *transport.Config, info ClientInfo) ([]json.RawMessage, error) {
	s, err := dialSession(ctx, cfg, discardPeer{}, Hooks{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if !cfg.IsStateless() {
		if err := s.Initialize(ctx, info); err != nil {
			return nil, err
		}
	}
	s.info = info
	return s.ListTools(ctx)
}

// Initialize performs the handshake on a session the proxy holds itself.
func (s *Session) Initialize(ctx context.Context, info ClientInfo) error {
	params, _ := json.Marshal(map[string]any{"protocolVersion": ProtocolVersion, "capabilities": map[string]any{}, "clientInfo": info})
	m := &jsonrpc.Message{ID: json.RawMessage(`0`), Method: "initialize", Params: params}
	if _, rpcErr := s.initialize(ctx, m); rpcErr != nil {
		var e jsonrpc.RPCError
		_ = json.Unmarshal(rpcErr, &e)
		return fmt.Errorf("server %q: initialize: %s", s.cfg.ID, e.Message)
	}
	s.sendDown([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return nil
}

// ListTools pages through the server's tools/list on this session, on the
// proxy's own behalf.
func (s *Session) ListTools(ctx context.Context) ([]json.RawMessage, error) {
	var all []json.RawMessage
	var cursor json.RawMessage
	for page := 0; page < 1000; page++ {
		params := json.RawMessage(`{}`)
		if cursor != nil {
			params, _ = json.Marshal(map[string]json.RawMessage{"cursor": cursor})
		}
		if s.cfg.IsStateless() {
			params = ModernMeta(params, s.info)
		}
		res, err := s.Request(ctx, "tools/list", params)
		if err != nil {
			return nil, err
		}
		var r struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor json.RawMessage   `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			return nil, fmt.Errorf("server %q: tools/list: %w", s.cfg.ID, err)
		}
		all = append(all, r.Tools...)
		if !jsonrpc.HasID(r.NextCursor) || string(r.NextCursor) == `""` {
			return all, nil
		}
		cursor = r.NextCursor
	}
	return nil, fmt.Errorf("server %q: tools/list did not end after 1000 pages", s.cfg.ID)
}
