package mcpproxy

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// Probe finds the era of the server cfg describes, as the protocol's
// backward-compatibility rules say a dual-era client does: server/discover
// first; a DiscoverResult listing 2026-07-28, or an
// UnsupportedProtocolVersionError, means a modern server; anything else
// (an error that is not a modern one, a 4xx without one, silence until
// the timeout) means a legacy one. A pinned protocol_version decides
// without asking. discover is the server's DiscoverResult when it gave one.
func Probe(ctx context.Context, cfg *transport.Config, info ClientInfo) (era mcpwire.Era, discover json.RawMessage, err error) {
	if cfg.ProtocolVersion != "" {
		if mcpwire.IsStateless(cfg.ProtocolVersion) {
			return mcpwire.EraModern, nil, nil
		}
		return mcpwire.EraLegacy, nil, nil
	}
	s, err := dialSession(ctx, cfg.Stateless(), discardPeer{}, Hooks{})
	if err != nil {
		return mcpwire.EraLegacy, nil, err
	}
	defer s.Close()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout(cfg))
	defer cancel()
	r := s.roundTrip(pctx, &jsonrpc.Message{Method: "server/discover", Params: ModernMeta(nil, info)}, nil, probeTimeout(cfg), false)
	switch {
	case r.err != nil:
		return mcpwire.EraLegacy, nil, nil
	case r.rpcErr != nil:
		e := jsonrpc.ParseError(r.rpcErr)
		var d struct {
			Supported []string `json:"supported"`
		}
		if e.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION && json.Unmarshal(e.Data, &d) == nil && slices.Contains(d.Supported, mcpwire.Modern) {
			return mcpwire.EraOf(d.Supported), nil, nil
		}
		return mcpwire.EraLegacy, nil, nil
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(r.result, &d) == nil && slices.Contains(d.SupportedVersions, mcpwire.Modern) {
		return mcpwire.EraOf(d.SupportedVersions), r.result, nil
	}
	return mcpwire.EraLegacy, nil, nil
}

// probeTimeout bounds the discover probe: a legacy stdio server may not
// answer an unknown method at all.
func probeTimeout(cfg *transport.Config) time.Duration {
	return min(cfg.RequestTimeout(""), probeMax)
}

// probeMax is the longest the probe waits for server/discover.
const probeMax = 10 * time.Second

// ModernMeta returns params (a JSON object, or nil for {}) with the
// 2026-07-28 request _meta toolgate sends on its own behalf: protocol
// version, no client capabilities, and toolgate's identity.
func ModernMeta(params json.RawMessage, info ClientInfo) json.RawMessage {
	f, err := jsonrpc.ParseFields(params)
	if err != nil || params == nil {
		f = nil
	}
	clientInfo, _ := json.Marshal(info)
	meta := jsonrpc.Fields{
		{Key: mcpwire.MetaProtocolVersion, Value: jsonrpc.Quote(mcpwire.Modern)},
		{Key: mcpwire.MetaClientCapabilities, Value: json.RawMessage(`{}`)},
		{Key: mcpwire.MetaClientInfo, Value: clientInfo},
	}
	return f.Set("_meta", meta.Encode()).Encode()
}
