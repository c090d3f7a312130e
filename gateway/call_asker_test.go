package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// answeringPeer is a client that answers each request sent to it with
// result, and counts the notifications it gets.
type answeringPeer struct {
	out    *jsonrpc.Outbound
	result string
	notes  int
}

func (p *answeringPeer) Send(msg []byte, _ json.RawMessage, _ bool) {
	m, err := jsonrpc.ParseMessage(msg)
	if err != nil {
		return
	}
	if m.Kind() == jsonrpc.KindNotification {
		p.notes++
		return
	}
	go p.out.Deliver(&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(p.result)})
}

// TestAskerAdapter: the pipeline gets the client's answer as its own, and
// callpipe.ErrNoElicitation for a client that cannot be asked; progress
// reaches the client.
func TestAskerAdapter(t *testing.T) {
	t.Parallel()
	caps := json.RawMessage(`{"elicitation":{}}`)
	cases := []struct {
		result string
		want   callpipe.Answer
	}{
		{`{"action":"accept","content":{"approve":true}}`, callpipe.Approved},
		{`{"action":"accept","content":{"approve":false}}`, callpipe.Declined},
		{`{"action":"decline"}`, callpipe.Declined},
		{`{"action":"cancel"}`, callpipe.Cancelled},
	}
	for _, c := range cases {
		out := jsonrpc.NewOutbound("tg-")
		peer := &answeringPeer{out: out, result: c.result}
		a := newAsker(mcpwire.Client{Peer: peer, Outbound: out, Version: "2025-11-25", Capabilities: caps}, jsonrpc.IntID(1), json.Number("7"))
		got, err := a.Elicit(context.Background(), "approve?")
		if err != nil || got != c.want {
			t.Errorf("%s: %v %v, want %v", c.result, got, err, c.want)
		}
		if !a.Progress(context.Background(), 1, 2, "waiting") || peer.notes != 1 {
			t.Errorf("%s: progress not sent", c.result)
		}
	}
	stateless := newAsker(mcpwire.Client{Peer: &answeringPeer{}, Outbound: jsonrpc.NewOutbound("tg-"), Version: mcpwire.Modern, Capabilities: caps}, jsonrpc.IntID(1), nil)
	if got, err := stateless.Elicit(context.Background(), "q"); !errors.Is(err, callpipe.ErrNoElicitation) || got != callpipe.Declined {
		t.Errorf("a client that cannot be asked: %v %v", got, err)
	}
	if stateless.Progress(context.Background(), 1, 2, "x") {
		t.Error("progress sent without a token")
	}
}
