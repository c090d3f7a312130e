package mcpproxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestMain runs the tiny stdio server when this test binary is started as
// one (tinyConfig).
func TestMain(m *testing.M) { servertest.Main(m) }

// tinyConfig describes the tiny stdio server; env adds its switches.
func tinyConfig(id string, env ...string) *transport.Config {
	return &transport.Config{ID: id, Command: servertest.TinyCommand(), Env: servertest.TinyEnv(env...), Timeout: 10 * time.Second}
}

// forwardAll is the CallTool hook of tests that govern nothing: every
// call is forwarded as the client sent it (one sent without an id is
// dropped, as the gateway never forwards one).
func forwardAll(ctx context.Context, c ToolCall) (json.RawMessage, json.RawMessage) {
	if c.Forward == nil {
		return nil, nil
	}
	result, rpcErr, err := c.Forward(ctx, toolName(c.Params), c.Params)
	if err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, err.Error())
	}
	return result, rpcErr
}

// sent is one message a session gave its client.
type sent struct {
	msg       string
	route     string
	droppable bool
}

// recorder is the client side of a session under test.
type recorder struct {
	mu   sync.Mutex
	msgs []sent
	cond chan struct{}
	// onRequest answers the server's requests the relay passes on.
	onRequest func(m *jsonrpc.Message)
}

func newRecorder() *recorder { return &recorder{cond: make(chan struct{}, 1)} }

func (r *recorder) Send(msg []byte, route json.RawMessage, droppable bool) {
	r.mu.Lock()
	r.msgs = append(r.msgs, sent{string(msg), string(route), droppable})
	on := r.onRequest
	r.mu.Unlock()
	select {
	case r.cond <- struct{}{}:
	default:
	}
	if on != nil {
		if m, err := jsonrpc.ParseMessage(msg); err == nil && m.Kind() == jsonrpc.KindRequest {
			go on(m)
		}
	}
}

// wait returns the first message sent that contains substr.
func (r *recorder) wait(t *testing.T, substr string) sent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		for _, s := range r.msgs {
			if strings.Contains(s.msg, substr) {
				r.mu.Unlock()
				return s
			}
		}
		r.mu.Unlock()
		select {
		case <-r.cond:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no message containing %q; got %v", substr, r.all())
		}
	}
}

func (r *recorder) all() []sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sent(nil), r.msgs...)
}

func (r *recorder) has(substr string) bool {
	for _, s := range r.all() {
		if strings.Contains(s.msg, substr) {
			return true
		}
	}
	return false
}

func msg(t *testing.T, s string) *jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.ParseMessage([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

const initMsg = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`

// startSession opens a relay to cfg for rec and plays the client's
// handshake.
func startSession(t *testing.T, cfg *transport.Config, rec *recorder, hooks Hooks) *Session {
	t.Helper()
	return startSessionIn(t, context.Background(), cfg, rec, hooks)
}

// startSessionIn is startSession with the client transport's context
// (a listen signal).
func startSessionIn(t *testing.T, ctx context.Context, cfg *transport.Config, rec *recorder, hooks Hooks) *Session {
	t.Helper()
	s, err := NewSession(ctx, cfg, rec, hooks)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.HandleClient(context.Background(), msg(t, initMsg))
	rec.wait(t, `"protocolVersion"`)
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

// callText is a tools/call message.
func callText(id, tool, args string) string {
	if args == "" {
		args = "{}"
	}
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
}
