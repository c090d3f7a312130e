package mcpproxy

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
)

// Era is which protocol eras a downstream server speaks.
type Era int

// The eras.
const (
	// Legacy servers want initialize and sessions (2025-11-25 and earlier).
	Legacy Era = iota
	// Modern servers are stateless (2026-07-28) and speak nothing older.
	Modern
	// DualEra servers speak both: legacy clients get a session of their
	// own, stateless clients go through the forwarder.
	DualEra
)

func (e Era) String() string {
	switch e {
	case Modern:
		return mcp.ProtocolVersion20260728 + " only"
	case DualEra:
		return mcp.ProtocolVersion20260728 + " and earlier"
	}
	return "2025-11-25 or earlier"
}

// Stateless reports whether stateless requests go to the server as they
// are (it speaks 2026-07-28).
func (e Era) Stateless() bool { return e != Legacy }

// Probe finds the era of the server cfg describes, as the protocol's
// backward-compatibility rules say a dual-era client does: server/discover
// first; a DiscoverResult listing 2026-07-28, or an
// UnsupportedProtocolVersionError, means a modern server; anything else
// (an error that is not a modern one, a 4xx without one, silence until
// the timeout) means a legacy one. A pinned protocol_version decides
// without asking. discover is the server's DiscoverResult when it gave one.
func Probe(ctx context.Context, cfg *Config, info ClientInfo) (era Era, discover json.RawMessage, err error) {
	if cfg.ProtocolVersion != "" {
		if mcp.IsModernProtocol(cfg.ProtocolVersion) {
			return Modern, nil, nil
		}
		return Legacy, nil, nil
	}
	s, err := NewSession(ctx, cfg.Stateless(), discardUpstream{}, Hooks{})
	if err != nil {
		return Legacy, nil, err
	}
	defer s.Close()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout(cfg))
	defer cancel()
	r := s.roundTrip(pctx, &jsonrpc.Message{Method: "server/discover", Params: ModernMeta(nil, info)}, nil, probeTimeout(cfg), false)
	switch {
	case r.err != nil:
		return Legacy, nil, nil
	case r.rpcErr != nil:
		e := jsonrpc.ParseError(r.rpcErr)
		var d struct {
			Supported []string `json:"supported"`
		}
		if e.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION && json.Unmarshal(e.Data, &d) == nil && slices.Contains(d.Supported, mcp.ProtocolVersion20260728) {
			return eraOf(d.Supported), nil, nil
		}
		return Legacy, nil, nil
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(r.result, &d) == nil && slices.Contains(d.SupportedVersions, mcp.ProtocolVersion20260728) {
		return eraOf(d.SupportedVersions), r.result, nil
	}
	return Legacy, nil, nil
}

// eraOf is the era of a server supporting versions (which include
// 2026-07-28).
func eraOf(versions []string) Era {
	for _, v := range versions {
		if !mcp.IsModernProtocol(v) {
			return DualEra
		}
	}
	return Modern
}

// probeTimeout bounds the discover probe: a legacy stdio server may not
// answer an unknown method at all.
func probeTimeout(cfg *Config) time.Duration {
	return min(cfg.timeout(""), probeMax)
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
		{Key: mcp.MetaKeyProtocolVersion, Value: jsonrpc.Quote(mcp.ProtocolVersion20260728)},
		{Key: mcp.MetaKeyClientCapabilities, Value: json.RawMessage(`{}`)},
		{Key: mcp.MetaKeyClientInfo, Value: clientInfo},
	}
	return f.Set("_meta", meta.Encode()).Encode()
}
