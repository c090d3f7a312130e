package mcpproxy

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// Forwarder relays the stateless (2026-07-28) requests of many clients of
// one agent over one downstream connection: one HTTP client for an HTTP
// server (every request its own POST), one process for a stdio server.
// Request ids are the relay's own; a request's progress token is replaced
// by one of the relay's (two clients may use the same token) and given
// back on the notifications that carry it. Notifications that belong to no
// request (list changes, resource updates) go to the listeners.
type Forwarder struct {
	s    *Session
	next atomic.Int64

	mu        sync.Mutex
	routes    map[string]*route
	listeners map[int]func(msg []byte)
	nextL     int
}

// listenTimeout bounds a forwarded subscriptions/listen stream; the
// client's going away ends it long before.
const listenTimeout = 24 * time.Hour

// route is where one forwarded request's notifications go.
type route struct {
	notify func(msg []byte)
	// token is the client's progress token (raw JSON) the relay's own
	// replaced; restored on progress notifications.
	token json.RawMessage
	// listen is the filter of a subscriptions/listen stream: change
	// notifications the server sends untagged (no stream, no subscription
	// id) go to the streams whose filter asks for them.
	listen *listenFilter
}

// listenFilter is what a subscriptions/listen request asked for.
type listenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged"`
	PromptsListChanged    bool     `json:"promptsListChanged"`
	ResourcesListChanged  bool     `json:"resourcesListChanged"`
	ResourceSubscriptions []string `json:"resourceSubscriptions"`
}

// wants reports whether the filter asks for notification m.
func (lf *listenFilter) wants(m *jsonrpc.Message) bool {
	switch m.Method {
	case "notifications/tools/list_changed":
		return lf.ToolsListChanged
	case "notifications/prompts/list_changed":
		return lf.PromptsListChanged
	case "notifications/resources/list_changed":
		return lf.ResourcesListChanged
	case "notifications/resources/updated":
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		return slices.Contains(lf.ResourceSubscriptions, p.URI)
	}
	return false
}

// refuses reports whether m is a change notification the filter did not
// ask for (one the server sent on the stream all the same).
func (lf *listenFilter) refuses(m *jsonrpc.Message) bool {
	switch m.Method {
	case "notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/resources/list_changed", "notifications/resources/updated":
		return !lf.wants(m)
	}
	return false
}

// NewForwarder connects to the server described by cfg (a stateless copy
// for a 2026-07-28 server).
func NewForwarder(ctx context.Context, cfg *transport.Config) (*Forwarder, error) {
	f := &Forwarder{routes: map[string]*route{}, listeners: map[int]func([]byte){}}
	s, err := dialSession(ctx, cfg, f, Hooks{})
	if err != nil {
		return nil, err
	}
	f.s = s
	return f, nil
}

// Do sends one request with params and waits for its answer: the result or
// JSON-RPC error object, or err when the server could not answer. tool
// names the tool of a tools/call (for its timeout). Notifications about
// the request go to notify (nil: dropped).
func (f *Forwarder) Do(ctx context.Context, method, tool string, params []byte, notify func(msg []byte)) (result, rpcErr json.RawMessage, err error) {
	key := json.RawMessage(strconv.Quote("fw-" + strconv.FormatInt(f.next.Add(1), 10)))
	rt := &route{notify: notify}
	if method == "subscriptions/listen" {
		rt.listen = &listenFilter{}
		_ = json.Unmarshal(jsonrpc.Field(params, "notifications"), rt.listen)
	}
	if tok := progressToken(params); tok != nil {
		if fp, perr := jsonrpc.ParseFields(params); perr == nil {
			if meta, merr := jsonrpc.ParseFields(fp.Get("_meta")); merr == nil {
				own := json.RawMessage(strconv.Quote("tgp-" + strconv.FormatInt(f.next.Add(1), 10)))
				rt.token = tok
				params = fp.Set("_meta", meta.Set("progressToken", own).Encode()).Encode()
			}
		}
	}
	f.mu.Lock()
	f.routes[jsonrpc.IDKey(key)] = rt
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.routes, jsonrpc.IDKey(key))
		f.mu.Unlock()
	}()
	timeout := f.s.cfg.RequestTimeout(tool)
	if method == "subscriptions/listen" {
		timeout = listenTimeout // a stream that lasts as long as its client
	}
	r := f.s.roundTrip(ctx, &jsonrpc.Message{Method: method, Params: params}, key, timeout, false)
	return r.result, r.rpcErr, r.err
}

// Initialize performs the handshake when the server is a legacy one: the
// forwarder then relays stateless clients' requests over one session of
// its own (capabilities: none, so the server sends no requests).
func (f *Forwarder) Initialize(ctx context.Context, info ClientInfo) error {
	return f.s.Initialize(ctx, info)
}

// Send implements mcpwire.Peer for the session underneath: messages routed to
// a request go to its notify, the rest to every listener. A legacy
// server's request to the client (sampling, elicitation) cannot reach a
// stateless client: it is answered with an error.
func (f *Forwarder) Send(msg []byte, key json.RawMessage, droppable bool) {
	if !droppable {
		if m, err := jsonrpc.ParseMessage(msg); err == nil && m.Kind() == jsonrpc.KindRequest {
			f.s.clientResponse(&jsonrpc.Message{ID: m.ID, Error: jsonrpc.ErrorObject(jsonrpc.CodeMethodNotFound,
				"the client speaks protocol version "+mcpwire.Modern+", which has no server-to-client requests; "+m.Method+" cannot be relayed")})
			return
		}
	}
	if key == nil {
		f.mu.Lock()
		ls := make([]func([]byte), 0, len(f.listeners))
		for _, l := range f.listeners {
			ls = append(ls, l)
		}
		if m, err := jsonrpc.ParseMessage(msg); err == nil && m.Method != "" {
			for _, rt := range f.routes {
				if rt.listen != nil && rt.notify != nil && rt.listen.wants(m) {
					ls = append(ls, rt.notify)
				}
			}
		}
		f.mu.Unlock()
		for _, l := range ls {
			l(msg)
		}
		return
	}
	f.mu.Lock()
	rt := f.routes[jsonrpc.IDKey(key)]
	f.mu.Unlock()
	if rt == nil || rt.notify == nil {
		return
	}
	if rt.token != nil || rt.listen != nil {
		m, err := jsonrpc.ParseMessage(msg)
		switch {
		case err != nil:
		case rt.listen != nil && rt.listen.refuses(m):
			return // a frame of the stream the client's filter did not ask for
		case rt.token != nil && m.Method == "notifications/progress":
			if fp, err := jsonrpc.ParseFields(m.Params); err == nil {
				m.Params = fp.Set("progressToken", rt.token).Encode()
				msg = m.Encode()
			}
		}
	}
	rt.notify(msg)
}

// Listen registers fn for the notifications that belong to no request;
// the returned func stops it.
func (f *Forwarder) Listen(fn func(msg []byte)) func() {
	f.mu.Lock()
	f.nextL++
	id := f.nextL
	f.listeners[id] = fn
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.listeners, id)
		f.mu.Unlock()
	}
}

// Close ends the downstream connection.
func (f *Forwarder) Close() error { return f.s.Close() }
