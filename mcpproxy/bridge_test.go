package mcpproxy

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// startBridge puts a legacy client (rec) in front of the 2026-07-28
// server at url, as the gateway does for a 2026-only server.
func startBridge(t *testing.T, url string, rec *recorder, hooks Hooks) *Bridge {
	t.Helper()
	b := newBridge(t, &transport.Config{ID: "modern", URL: url, Timeout: 10 * time.Second}, rec, hooks)
	initBridge(t, b, rec)
	return b
}

// newBridge is startBridge to the server of cfg before the client's
// initialize (which starts the listen loop).
func newBridge(t *testing.T, cfg *transport.Config, rec *recorder, hooks Hooks) *Bridge {
	t.Helper()
	era, discover, err := Probe(context.Background(), cfg, ClientInfo{Name: "toolgate", Version: "1"})
	if err != nil || !era.Stateless() {
		t.Fatalf("probe: %v %v", era, err)
	}
	b, err := NewBridge(context.Background(), cfg.Stateless(), rec, hooks, discover)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// initBridge plays the legacy client's initialize.
func initBridge(t *testing.T, b *Bridge, rec *recorder) {
	t.Helper()
	b.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"legacy","version":"1"}}}`))
	rec.wait(t, `"id":0`)
}

// TestBridgeInitialize: the bridge answers the legacy handshake itself,
// from the server's discovery.
func TestBridgeInitialize(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	rec := newRecorder()
	startBridge(t, url, rec, Hooks{CallTool: forwardAll})
	init := rec.wait(t, `"id":0`)
	if !strings.Contains(init.msg, `"protocolVersion":"2025-11-25"`) || !strings.Contains(init.msg, `"tools"`) || !strings.Contains(init.msg, `"serverInfo"`) {
		t.Errorf("initialize %s", init.msg)
	}
}

// TestBridgeInputRounds: a server's input-required result becomes the
// server-to-client request the legacy client understands; its answer and
// the server's requestState go back on the retry.
func TestBridgeInputRounds(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	rec := newRecorder()
	var b *Bridge
	var asked atomic.Int32
	rec.onRequest = func(m *jsonrpc.Message) {
		asked.Add(1)
		if m.Method != "elicitation/create" {
			t.Errorf("asked %s %s", m.Method, m.Params)
		}
		b.HandleClient(context.Background(), &jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"action":"accept","content":{"yes":true}}`)})
	}
	b = startBridge(t, url, rec, Hooks{CallTool: forwardAll})
	b.HandleClient(context.Background(), msg(t, callText("1", "confirm", "")))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, `confirmed accept {\"yes\":true} state=st-1`) {
		t.Errorf("answer %s", m.msg)
	}
	if asked.Load() != 1 {
		t.Errorf("asked %d times", asked.Load())
	}
	// A server that never stops asking is given up on.
	b.HandleClient(context.Background(), msg(t, callText("2", "nag", "")))
	if m := rec.wait(t, `"id":2`); !strings.Contains(m.msg, "gave up after 8 rounds") {
		t.Errorf("nag %s", m.msg)
	}
}

// TestBridgeClientRefuses: a client that answers the server's question
// with an error fails the call with a reason.
func TestBridgeClientRefuses(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	rec := newRecorder()
	var b *Bridge
	rec.onRequest = func(m *jsonrpc.Message) {
		b.HandleClient(context.Background(), &jsonrpc.Message{ID: m.ID, Error: jsonrpc.ErrorObject(-1, "no UI here")})
	}
	b = startBridge(t, url, rec, Hooks{CallTool: forwardAll})
	b.HandleClient(context.Background(), msg(t, callText("1", "confirm", "")))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "the client did not answer the server's elicitation/create: no UI here") {
		t.Errorf("%s", m.msg)
	}
}

// TestBridgeLocalMethods: what the legacy protocol has and 2026-07-28
// does not is answered by the bridge; resources/subscribe has no bridge.
func TestBridgeLocalMethods(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	rec := newRecorder()
	listed := 0
	b := startBridge(t, url, rec, Hooks{CallTool: forwardAll, ToolsList: func(r json.RawMessage) json.RawMessage { listed++; return r }})
	cases := []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `"id":1,"result":{}`},
		{`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`, `"id":2,"result":{}`},
		{`{"jsonrpc":"2.0","id":3,"method":"resources/subscribe","params":{"uri":"x"}}`, "cannot be bridged"},
		{`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`, `"echo"`},
		{callText("5", "echo", `{"text":"bridged"}`), "bridged"},
	}
	for _, c := range cases {
		b.HandleClient(context.Background(), msg(t, c.in))
		id := `"id":` + string(msg(t, c.in).ID)
		if m := rec.wait(t, id+","); !strings.Contains(m.msg, c.want) {
			t.Errorf("%s: %s", c.in, m.msg)
		}
	}
	if listed != 1 {
		t.Errorf("ToolsList ran %d times", listed)
	}
}

// TestBridgeGoverned: with hooks, tools/call goes through CallTool, and
// one without an id reaches it with nothing to forward.
func TestBridgeGoverned(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	rec := newRecorder()
	var idless atomic.Int32
	b := startBridge(t, url, rec, Hooks{CallTool: func(ctx context.Context, c ToolCall) (json.RawMessage, json.RawMessage) {
		if c.Forward == nil {
			idless.Add(1)
			return nil, nil
		}
		if c.Client.Version != "2025-11-25" {
			t.Errorf("client %+v", c.Client)
		}
		res, rpcErr, err := c.Forward(ctx, "echo", []byte(`{"name":"echo","arguments":{"text":"governed"}}`))
		if err != nil {
			t.Error(err)
		}
		return res, rpcErr
	}})
	b.HandleClient(context.Background(), msg(t, callText("1", "echo", `{"text":"raw"}`)))
	rec.wait(t, "governed")
	b.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`))
	if idless.Load() != 1 {
		t.Error("the id-less call did not reach the hook")
	}
}

// TestBridgeListChanged: list changes come on the bridge's own
// subscriptions/listen stream and reach the legacy client without the
// subscription's _meta.
func TestBridgeListChanged(t *testing.T) {
	t.Parallel()
	s, url := servertest.GoServer(t)
	rec := newRecorder()
	changed := make(chan struct{}, 2)
	startBridge(t, url, rec, Hooks{CallTool: forwardAll, ToolsChanged: func(_ context.Context, sess *Session) {
		if sess != nil {
			t.Error("a bridge's change names no session")
		}
		changed <- struct{}{}
	}})
	// The listen stream is open once the server acknowledged it; adding
	// tools until the change arrives covers the moment before.
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; !rec.has("notifications/tools/list_changed"); n++ {
		if time.Now().After(deadline) {
			t.Fatal("no list_changed")
		}
		s.AddTool(mcp.NewTool("added"+string(rune('a'+n%26))), nil)
		time.Sleep(20 * time.Millisecond)
	}
	if m := rec.wait(t, "notifications/tools/list_changed"); strings.Contains(m.msg, "subscriptionId") {
		t.Errorf("relayed %s", m.msg)
	}
	<-changed
}

// TestBridgeCancel: the client's notifications/cancelled ends the call
// (its POST), and nothing is answered for it.
func TestBridgeCancel(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}), make(chan struct{})
	url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		switch m.Method {
		case "server/discover":
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{}}`)}).Encode())
		case "tools/call":
			close(started)
			<-r.Context().Done()
			close(ended)
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	})
	rec := newRecorder()
	b := startBridge(t, url, rec, Hooks{CallTool: forwardAll})
	b.HandleClient(context.Background(), msg(t, callText(`"c"`, "slow", "")))
	<-started
	b.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c"}}`))
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the call's POST outlived its cancellation")
	}
}

func TestWithoutMeta(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"a":1,"_meta":{"io.modelcontextprotocol/subscriptionId":"s"}}`: `{"a":1}`,
		`{"_meta":{"io.modelcontextprotocol/subscriptionId":"s","k":2}}`: `{"_meta":{"k":2}}`,
		`{"a":1}`: `{"a":1}`,
		`[1]`:     `[1]`,
	}
	for in, want := range cases {
		if got := string(withoutMeta(json.RawMessage(in))); got != want {
			t.Errorf("withoutMeta(%s) = %s, want %s", in, got, want)
		}
	}
}
