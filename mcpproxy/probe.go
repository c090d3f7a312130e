package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// Probe finds the eras the server cfg describes speaks by asking it in
// each: server/discover for 2026-07-28 (a DiscoverResult listing it, or an
// UnsupportedProtocolVersionError naming it, means the server speaks it)
// and initialize for the session era (accepted means it speaks that).
// Both are asked, side by side, whatever discover lists: a server whose
// DiscoverResult names only 2026-07-28 may still serve initialize (the
// conformance suite's reference server does), and a legacy client is then
// given a session of its own rather than a bridge. A server that answers
// neither is an error (nothing is known of it: the caller probes again
// later). A pinned protocol_version decides without asking. discover is
// the server's DiscoverResult when it gave one.
func Probe(ctx context.Context, cfg *transport.Config, info ClientInfo) (era mcpwire.Era, discover json.RawMessage, err error) {
	if cfg.ProtocolVersion != "" {
		if mcpwire.IsStateless(cfg.ProtocolVersion) {
			return mcpwire.EraModern, nil, nil
		}
		return mcpwire.EraLegacy, nil, nil
	}
	var (
		wg                   sync.WaitGroup
		modern               bool
		modernErr, legacyErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		legacyErr = probeLegacy(ctx, cfg, info)
	}()
	modern, discover, modernErr = probeModern(ctx, cfg, info)
	wg.Wait()
	switch {
	case modern && legacyErr == nil:
		return mcpwire.EraDual, discover, nil
	case modern:
		return mcpwire.EraModern, discover, nil
	case legacyErr == nil:
		return mcpwire.EraLegacy, nil, nil
	}
	return mcpwire.EraLegacy, nil, fmt.Errorf("server %q speaks no protocol era toolgate knows: server/discover: %v; initialize: %w", cfg.ID, modernErr, legacyErr)
}

// probeModern asks server/discover on a stateless connection: modern
// reports whether the server speaks 2026-07-28; err says why not.
func probeModern(ctx context.Context, cfg *transport.Config, info ClientInfo) (modern bool, discover json.RawMessage, err error) {
	s, err := dialSession(ctx, cfg.Stateless(), discardPeer{}, Hooks{})
	if err != nil {
		return false, nil, err
	}
	defer s.Close()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout(cfg))
	defer cancel()
	r := s.roundTrip(pctx, &jsonrpc.Message{Method: "server/discover", Params: ModernMeta(nil, info)}, nil, probeTimeout(cfg), false)
	switch {
	case r.err != nil:
		return false, nil, r.err
	case r.rpcErr != nil:
		e := jsonrpc.ParseError(r.rpcErr)
		var d struct {
			Supported []string `json:"supported"`
		}
		if e.Code == mcp.UNSUPPORTED_PROTOCOL_VERSION && json.Unmarshal(e.Data, &d) == nil && slices.Contains(d.Supported, mcpwire.Modern) {
			return true, nil, nil
		}
		return false, nil, errors.New(e.Message)
	}
	var d struct {
		SupportedVersions []string `json:"supportedVersions"`
	}
	if json.Unmarshal(r.result, &d) == nil && slices.Contains(d.SupportedVersions, mcpwire.Modern) {
		return true, r.result, nil
	}
	return false, nil, fmt.Errorf("its DiscoverResult does not list %s", mcpwire.Modern)
}

// probeLegacy performs the session handshake on a session of the probe's
// own, ended at once: nil when the server accepted it.
func probeLegacy(ctx context.Context, cfg *transport.Config, info ClientInfo) error {
	s, err := dialSession(ctx, cfg, discardPeer{}, Hooks{})
	if err != nil {
		return err
	}
	defer s.Close()
	pctx, cancel := context.WithTimeout(ctx, probeTimeout(cfg))
	defer cancel()
	return s.Initialize(pctx, info)
}

// probeTimeout bounds each question of the probe: a legacy stdio server
// may not answer an unknown method at all.
func probeTimeout(cfg *transport.Config) time.Duration {
	return min(cfg.RequestTimeout(""), probeMax)
}

// probeMax is the longest the probe waits for an answer.
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
