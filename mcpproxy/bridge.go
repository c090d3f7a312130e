package mcpproxy

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/workers"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// maxInputRounds bounds how many input-required rounds the bridge plays
// for one request before giving up.
const maxInputRounds = 8

// Bridge serves a legacy (session, initialize) client in front of a server
// that speaks only 2026-07-28. It answers initialize itself from the
// server's DiscoverResult and sends every request on with the stateless
// _meta the server needs (protocol version, the capabilities and identity
// the client gave in initialize, the log level it set). What has no
// stateless form is translated: an input-required result becomes the
// server-to-client requests the legacy client understands (elicitation,
// sampling, roots), answered and retried on the client's behalf; list
// changes arrive on a subscriptions/listen stream the bridge holds (and
// reopens when it ends: listen) and go to the client's GET stream.
// resources/subscribe has no bridge and is refused with a clear error.
type Bridge struct {
	f        *Forwarder
	up       mcpwire.Peer
	hooks    Hooks
	discover json.RawMessage
	reqs     mcpwire.Requests
	out      *jsonrpc.Outbound
	ctx      context.Context
	stop     context.CancelFunc
	wg       sync.WaitGroup
	// workers serve the client's requests (counted in wg).
	workers *workers.Pool
	id      string
	log     *slog.Logger
	// listenOnce starts the listen loop at the first initialize; a
	// client's second initialize does not open a second stream.
	listenOnce sync.Once
	// listenEnded is closed when the listen loop returns.
	listenEnded chan struct{}
	// listenWait replaces the listen loop's backoff timer in tests (nil:
	// a timer): it waits d, or less, and reports false once ctx ended.
	listenWait func(ctx context.Context, d time.Duration) bool

	mu       sync.Mutex
	version  string
	caps     json.RawMessage
	info     json.RawMessage
	logLevel json.RawMessage
}

// NewBridge connects to the 2026-07-28 server of cfg (a stateless copy) for
// one legacy client session, deciding every tools/call through
// hooks.CallTool (required: ErrNoCallTool without it).
func NewBridge(ctx context.Context, cfg *transport.Config, up mcpwire.Peer, hooks Hooks, discover json.RawMessage) (*Bridge, error) {
	if hooks.CallTool == nil {
		return nil, fmt.Errorf("bridge to server %q: %w", cfg.ID, ErrNoCallTool)
	}
	f, err := NewForwarder(ctx, cfg)
	if err != nil {
		return nil, err
	}
	bctx, stop := context.WithCancel(context.Background())
	b := &Bridge{f: f, up: up, hooks: hooks, discover: discover, out: jsonrpc.NewOutbound("tg-"), ctx: bctx, stop: stop,
		id: cfg.ID, log: cfg.Log(), listenEnded: make(chan struct{})}
	b.workers = workers.New(&b.wg, bctx.Done())
	return b, nil
}

// Close ends the session and the connection behind it.
func (b *Bridge) Close() error {
	b.stop()
	b.wg.Wait()
	return b.f.Close()
}

// HandleClient takes one message from the legacy client (the gateway
// serves a Bridge, like a Session, as the session of a client endpoint).
func (b *Bridge) HandleClient(ctx context.Context, m *jsonrpc.Message) {
	switch m.Kind() {
	case jsonrpc.KindRequest:
		rctx, done := b.reqs.Start(ctx, b.ctx, m.ID)
		b.workers.Go(func() {
			defer done()
			result, rpcErr := b.serve(rctx, m)
			if rctx.Err() != nil && result == nil && rpcErr == nil {
				return
			}
			b.up.Send((&jsonrpc.Message{ID: m.ID, Result: result, Error: rpcErr}).Encode(), m.ID, false)
		})
	case jsonrpc.KindNotification:
		switch m.Method {
		case "notifications/cancelled":
			b.reqs.Cancel(m.Params)
		case "tools/call":
			// No id: refused and audited by the gateway, never forwarded.
			b.hooks.CallTool(ctx, ToolCall{Params: m.Params, Client: b.client()})
		}
	case jsonrpc.KindResponse:
		b.out.Deliver(m)
	}
}

func (b *Bridge) client() mcpwire.Client {
	b.mu.Lock()
	defer b.mu.Unlock()
	return mcpwire.Client{Peer: b.up, Outbound: b.out, Version: b.version, Capabilities: b.caps}
}

func (b *Bridge) serve(ctx context.Context, m *jsonrpc.Message) (json.RawMessage, json.RawMessage) {
	notify := func(msg []byte) { b.up.Send(msg, m.ID, true) }
	switch m.Method {
	case "initialize":
		return b.initialize(m.Params), nil
	case "ping":
		return json.RawMessage(`{}`), nil
	case "logging/setLevel":
		b.mu.Lock()
		b.logLevel = jsonrpc.Field(m.Params, "level")
		b.mu.Unlock()
		return json.RawMessage(`{}`), nil
	case "resources/subscribe", "resources/unsubscribe":
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeMethodNotFound, m.Method+" cannot be bridged: the server speaks protocol version "+mcpwire.Modern+" only, where resource updates come on subscriptions/listen; connect with "+mcpwire.Modern+" to subscribe")
	case "tools/call":
		return b.hooks.CallTool(ctx, ToolCall{ID: m.ID, Params: m.Params, Client: b.client(),
			Forward: func(ctx context.Context, name string, params []byte) (json.RawMessage, json.RawMessage, error) {
				return b.do(ctx, m.ID, "tools/call", name, params, notify)
			}})
	}
	result, rpcErr, err := b.do(ctx, m.ID, m.Method, toolName(m.Params), m.Params, notify)
	if err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, err.Error())
	}
	if rpcErr == nil && m.Method == "tools/list" && b.hooks.ToolsList != nil {
		result = b.hooks.ToolsList(result)
	}
	return result, rpcErr
}

// initialize answers the legacy handshake from the server's discovery.
func (b *Bridge) initialize(params json.RawMessage) json.RawMessage {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	version := mcpwire.NegotiateLegacy(p.ProtocolVersion)
	b.mu.Lock()
	b.version = version
	b.caps = jsonrpc.Field(params, "capabilities")
	b.info = jsonrpc.Field(params, "clientInfo")
	b.mu.Unlock()
	caps := jsonrpc.Field(b.discover, "capabilities")
	if caps == nil {
		caps = json.RawMessage(`{}`)
	}
	serverInfo := jsonrpc.Field(jsonrpc.Field(b.discover, "_meta"), mcpwire.MetaServerInfo)
	if serverInfo == nil {
		serverInfo = json.RawMessage(`{"name":"toolgate-bridge","version":"1"}`)
	}
	res := jsonrpc.Fields{{Key: "protocolVersion", Value: jsonrpc.Quote(version)}, {Key: "capabilities", Value: caps}, {Key: "serverInfo", Value: serverInfo}}
	if in := jsonrpc.Field(b.discover, "instructions"); in != nil {
		res = res.Set("instructions", in)
	}
	b.listenOnce.Do(func() {
		b.wg.Add(1)
		go b.listen()
	})
	return res.Encode()
}

// do sends one request with the session's stateless _meta and plays any
// input-required rounds against the legacy client.
func (b *Bridge) do(ctx context.Context, route json.RawMessage, method, tool string, params []byte, notify func([]byte)) (json.RawMessage, json.RawMessage, error) {
	params = b.meta(params)
	for round := 0; ; round++ {
		result, rpcErr, err := b.f.Do(ctx, method, tool, params, notify)
		if rpcErr != nil && b.hooks.EraRefused != nil && jsonrpc.ParseError(rpcErr).Code == mcp.UNSUPPORTED_PROTOCOL_VERSION {
			b.hooks.EraRefused(mcpwire.EraModern)
		}
		if err != nil || rpcErr != nil || string(jsonrpc.Field(result, "resultType")) != `"input_required"` {
			return result, rpcErr, err
		}
		if round >= maxInputRounds {
			return nil, jsonrpc.ErrorObject(jsonrpc.CodeInternalError, "the server kept asking for input; gave up after "+strconv.Itoa(maxInputRounds)+" rounds"), nil
		}
		responses, rpcErr := b.askClient(ctx, route, jsonrpc.Field(result, "inputRequests"))
		if rpcErr != nil {
			return nil, rpcErr, nil
		}
		f, _ := jsonrpc.ParseFields(params)
		f = f.Set("inputResponses", responses)
		if st := jsonrpc.Field(result, "requestState"); st != nil {
			f = f.Set("requestState", st)
		} else {
			f = f.Delete("requestState")
		}
		params = f.Encode()
	}
}

// askClient sends each of a server's input requests to the legacy client
// as the server-to-client request it stands for, and collects the answers
// by key.
func (b *Bridge) askClient(ctx context.Context, route json.RawMessage, requests json.RawMessage) (json.RawMessage, json.RawMessage) {
	reqs, err := jsonrpc.ParseFields(requests)
	if err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeInternalError, "the server's inputRequests are not an object")
	}
	var answers jsonrpc.Fields
	for _, r := range reqs {
		var method string
		_ = json.Unmarshal(jsonrpc.Field(r.Value, "method"), &method)
		res, err := b.out.Request(ctx, method, jsonrpc.Field(r.Value, "params"), func(msg []byte) error {
			b.up.Send(msg, route, false)
			return nil
		})
		if err != nil {
			return nil, jsonrpc.ErrorObject(jsonrpc.CodeInternalError, "the client did not answer the server's "+method+": "+err.Error())
		}
		answers = answers.Set(r.Key, res)
	}
	return answers.Encode(), nil
}

// meta adds the stateless _meta fields to params.
func (b *Bridge) meta(params json.RawMessage) json.RawMessage {
	f, err := jsonrpc.ParseFields(params)
	if err != nil {
		f = nil
	}
	meta, _ := jsonrpc.ParseFields(f.Get("_meta"))
	b.mu.Lock()
	caps, info, level := b.caps, b.info, b.logLevel
	b.mu.Unlock()
	if caps == nil {
		caps = json.RawMessage(`{}`)
	}
	meta = meta.Set(mcpwire.MetaProtocolVersion, jsonrpc.Quote(mcpwire.Modern)).Set(mcpwire.MetaClientCapabilities, caps)
	if info != nil {
		meta = meta.Set(mcpwire.MetaClientInfo, info)
	}
	if level != nil {
		meta = meta.Set(mcpwire.MetaLogLevel, level)
	}
	return f.Set("_meta", meta.Encode()).Encode()
}

// withoutMeta drops the subscription _meta a legacy client does not know.
func withoutMeta(params json.RawMessage) json.RawMessage {
	f, err := jsonrpc.ParseFields(params)
	if err != nil {
		return params
	}
	meta, err := jsonrpc.ParseFields(f.Get("_meta"))
	if err != nil {
		return params
	}
	meta = meta.Delete(mcpwire.MetaSubscriptionID)
	if len(meta) == 0 {
		return f.Delete("_meta").Encode()
	}
	return f.Set("_meta", meta.Encode()).Encode()
}
