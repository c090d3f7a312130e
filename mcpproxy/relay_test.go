package mcpproxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestRelayHooks: tools/call goes to the CallTool hook, which forwards
// the params it decided on (never the client's bytes); tools/list results
// pass the ToolsList hook; a tools/call without an id reaches the hook
// (to be refused and audited) with nothing to forward it.
func TestRelayHooks(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	var mu sync.Mutex
	var calls []ToolCall
	hooks := Hooks{
		CallTool: func(ctx context.Context, c ToolCall) (json.RawMessage, json.RawMessage) {
			mu.Lock()
			calls = append(calls, c)
			mu.Unlock()
			if c.Forward == nil {
				return nil, nil
			}
			if c.Client.Version != "2025-11-25" || !strings.Contains(string(c.Client.Capabilities), "sampling") || c.Client.Outbound == nil {
				t.Errorf("client %+v", c.Client)
			}
			res, rpcErr, err := c.Forward(ctx, "echo", []byte(`{"name":"echo","arguments":{"text":"decided"}}`))
			if err != nil {
				t.Error(err)
			}
			return res, rpcErr
		},
		ToolsList: func(result json.RawMessage) json.RawMessage { return json.RawMessage(`{"tools":[{"name":"only"}]}`) },
	}
	s := startSession(t, tinyConfig("tiny"), rec, hooks)
	s.HandleClient(context.Background(), msg(t, callText("1", "echo", `{"text":"sent"}`)))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, `"text":"decided"`) {
		t.Errorf("forwarded %s, want the decided params", m.msg)
	}
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
	if m := rec.wait(t, `"id":2`); m.msg != `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"only"}]}}` {
		t.Errorf("tools/list %s", m.msg)
	}
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`))
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 2 || calls[1].ID != nil || calls[1].Forward != nil {
		t.Errorf("id-less call reached the hook as %+v", calls)
	}
}

// TestRelayNoAnswer: a hook that returns nothing is answered with an
// internal error, not left hanging.
func TestRelayNoAnswer(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: func(context.Context, ToolCall) (json.RawMessage, json.RawMessage) { return nil, nil }})
	s.HandleClient(context.Background(), msg(t, callText("1", "echo", "")))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "-32603") {
		t.Errorf("%s", m.msg)
	}
}

// TestRelayNotifications: the client's notifications go to the server as
// they are; a response to a request of the gateway's own (Outbound) is
// delivered there.
func TestRelayNotifications(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`))
	done := make(chan json.RawMessage, 1)
	go func() {
		res, _ := s.client().Outbound.Request(context.Background(), "elicitation/create", []byte(`{}`), func(m []byte) error {
			s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":"tg-1","result":{"action":"decline"}}`))
			return nil
		})
		done <- res
	}()
	if res := <-done; string(res) != `{"action":"decline"}` {
		t.Errorf("outbound answer %s", res)
	}
	// A notification that is not one (unknown method without notifications/) is dropped.
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"weird"}`))
	s.HandleClient(context.Background(), msg(t, callText("1", "echo", `{"text":"still here"}`)))
	rec.wait(t, "still here")
}

func TestToolName(t *testing.T) {
	t.Parallel()
	if toolName(json.RawMessage(`{"name":"a"}`)) != "a" || toolName(json.RawMessage(`{"name":1}`)) != "" || toolName(nil) != "" {
		t.Error("toolName")
	}
}

// hintLog records the stream hints the downstream transport gives.
type hintLog struct {
	mu     sync.Mutex
	events []string
}

func (h *hintLog) Streamed()              { h.add("streamed") }
func (h *hintLog) Paused(d time.Duration) { h.add("paused " + d.String()) }
func (h *hintLog) add(s string) {
	h.mu.Lock()
	h.events = append(h.events, s)
	h.mu.Unlock()
}

// TestRelayRoutesByStream: what comes on a call's SSE stream belongs to
// that call: its progress and the server's requests are routed to it, a
// notification written just after the answer still reaches the client
// first, and the client's transport hears (through the request's
// context) that the answer streamed.
func TestRelayRoutesByStream(t *testing.T) {
	t.Parallel()
	url := servertest.StreamedAnswer(t)
	rec := newRecorder()
	s := startSession(t, &transport.Config{ID: "r", URL: url, Timeout: 5 * time.Second}, rec, Hooks{CallTool: forwardAll})
	hints := &hintLog{}
	s.HandleClient(mcpwire.WithStreamHints(context.Background(), hints), msg(t, callText(`"c"`, "x", "")))
	rec.wait(t, `"done":1`)
	var order []string
	for _, m := range rec.all()[1:] {
		order = append(order, m.route)
		if strings.Contains(m.msg, `"done":1`) {
			break
		}
	}
	if len(order) != 4 || order[0] != `"c"` || order[1] != `"c"` || order[2] != `"c"` {
		t.Errorf("routes %q in %v", order, rec.all())
	}
	if all := rec.all(); !strings.Contains(all[len(all)-1].msg, `"done":1`) {
		t.Errorf("the answer came before the notification written after it: %v", all)
	}
	hints.mu.Lock()
	defer hints.mu.Unlock()
	if len(hints.events) != 1 || hints.events[0] != "streamed" {
		t.Errorf("hints %q", hints.events)
	}
}
