package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// recordingPeer keeps what is sent to the client; answer, when set,
// plays the client's side of a request sent to it.
type recordingPeer struct {
	mu     sync.Mutex
	msgs   []string
	routes []string
	answer func(m *jsonrpc.Message)
}

func (p *recordingPeer) Send(msg []byte, route json.RawMessage, _ bool) {
	p.mu.Lock()
	p.msgs = append(p.msgs, string(msg))
	p.routes = append(p.routes, string(route))
	answer := p.answer
	p.mu.Unlock()
	if m, err := jsonrpc.ParseMessage(msg); err == nil && m.Kind() == jsonrpc.KindRequest && answer != nil {
		go answer(m)
	}
}

func (p *recordingPeer) sent() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.msgs...)
}

func TestAskerProgress(t *testing.T) {
	t.Parallel()
	peer := &recordingPeer{}
	if NewAsker(mcpwire.Client{Peer: peer}, jsonrpc.IntID(1), nil).Progress(context.Background(), 1, 2, "x") {
		t.Error("progress sent without a token")
	}
	a := NewAsker(mcpwire.Client{Peer: peer}, jsonrpc.IntID(4), json.Number("7"))
	if !a.Progress(context.Background(), 2, 60, `waiting "for" approval`) {
		t.Fatal("no progress with a token")
	}
	got := peer.sent()
	want := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"message":"waiting \"for\" approval","progress":2,"progressToken":7,"total":60}}`
	if len(got) != 1 || got[0] != want || peer.routes[0] != "4" {
		t.Errorf("sent %q on %q\nwant %q", got, peer.routes, want)
	}
}

func TestAskerCanElicit(t *testing.T) {
	t.Parallel()
	peer := &recordingPeer{}
	out := jsonrpc.NewOutbound("tg-")
	caps := json.RawMessage(`{"elicitation":{}}`)
	cases := []struct {
		name string
		c    mcpwire.Client
		want bool
	}{
		{"session client with elicitation", mcpwire.Client{Peer: peer, Outbound: out, Version: "2025-11-25", Capabilities: caps}, true},
		{"no capability", mcpwire.Client{Peer: peer, Outbound: out, Version: "2025-11-25", Capabilities: json.RawMessage(`{}`)}, false},
		{"stateless client", mcpwire.Client{Peer: peer, Outbound: out, Version: mcpwire.Modern, Capabilities: caps}, false},
		{"no outbound", mcpwire.Client{Peer: peer, Version: "2025-11-25", Capabilities: caps}, false},
		{"no peer", mcpwire.Client{Outbound: out, Version: "2025-11-25", Capabilities: caps}, false},
	}
	for _, c := range cases {
		a := NewAsker(c.c, jsonrpc.IntID(1), nil)
		if got := a.CanElicit(); got != c.want {
			t.Errorf("%s: CanElicit %v", c.name, got)
		}
		if !c.want {
			if _, err := a.Elicit(context.Background(), "q"); !errors.Is(err, ErrNoElicitation) {
				t.Errorf("%s: Elicit err %v", c.name, err)
			}
		}
	}
}

// TestAskerElicit: the question goes to the client on the request's own
// stream; its answer decides.
func TestAskerElicit(t *testing.T) {
	t.Parallel()
	out := jsonrpc.NewOutbound("tg-")
	cases := []struct {
		answer string
		want   Answer
		err    string
	}{
		{`{"action":"accept","content":{"approve":true}}`, Approved, ""},
		{`{"action":"accept","content":{"approve":false}}`, Declined, ""},
		{`{"action":"decline"}`, Declined, ""},
		{`{"action":"cancel"}`, Cancelled, ""},
		{`{"action":"shrug"}`, Declined, "unknown action"},
		{`[]`, Declined, "elicitation result"},
	}
	for _, c := range cases {
		peer := &recordingPeer{}
		answer := c.answer
		peer.answer = func(m *jsonrpc.Message) {
			if m.Method != "elicitation/create" || !strings.Contains(string(m.Params), "requestedSchema") {
				t.Errorf("asked %s %s", m.Method, m.Params)
			}
			out.Deliver(&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(answer)})
		}
		a := NewAsker(mcpwire.Client{Peer: peer, Outbound: out, Version: "2025-11-25", Capabilities: json.RawMessage(`{"elicitation":{}}`)}, jsonrpc.IntID(3), nil)
		got, err := a.Elicit(context.Background(), "approve?")
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v %v", c.answer, got, err)
		}
	}
	// The client answers with an error, or not at all.
	peer := &recordingPeer{answer: func(m *jsonrpc.Message) {
		out.Deliver(&jsonrpc.Message{ID: m.ID, Error: jsonrpc.ErrorObject(-1, "no UI")})
	}}
	a := NewAsker(mcpwire.Client{Peer: peer, Outbound: out, Version: "2025-11-25", Capabilities: json.RawMessage(`{"elicitation":{}}`)}, jsonrpc.IntID(3), nil)
	if _, err := a.Elicit(context.Background(), "q"); err == nil || !strings.Contains(err.Error(), "no UI") {
		t.Errorf("error answer: %v", err)
	}
	silent := NewAsker(mcpwire.Client{Peer: &recordingPeer{}, Outbound: out, Version: "2025-11-25", Capabilities: json.RawMessage(`{"elicitation":{}}`)}, jsonrpc.IntID(3), nil)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := silent.Elicit(ctx, "q"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("silent client: %v", err)
	}
}
