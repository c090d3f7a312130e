package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
)

// peerLog is the transport's side of a stream as the handler sees it
// (mcpwire.Peer): each message sent, in order.
type peerLog chan []byte

func (p peerLog) Send(msg []byte, _ json.RawMessage, _ bool) { p <- msg }

func (p peerLog) next(t *testing.T) string {
	t.Helper()
	select {
	case m := <-p:
		return string(m)
	case <-time.After(30 * time.Second):
		t.Fatal("nothing sent")
		return ""
	}
}

// TestListen: subscriptions/listen is acknowledged, tagged with the
// subscription (the request's id), and announces a reload that changes the
// agent's tools; the stream ends with its context, answering nothing.
func TestListen(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	h := packModern{g: e.g, agent: "a", s: e.g.rev.Load().surfaces["echo"]}
	m, err := jsonrpc.ParseMessage([]byte(`{"jsonrpc":"2.0","id":"sub-1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},` + modernMeta + `}}`))
	if err != nil {
		t.Fatal(err)
	}
	out := make(peerLog, 8)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { h.Serve(ctx, m, mcpserve.Request{Version: "2026-07-28"}, out); close(done) }()
	const tag = `"io.modelcontextprotocol/subscriptionId":"sub-1"`
	if ack := out.next(t); !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, tag) || !strings.Contains(ack, `"toolsListChanged":true`) {
		t.Fatalf("ack %s", ack)
	}
	e.write(t, "tool:vault:stash", "TOKEN")
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	if n := out.next(t); !strings.Contains(n, "notifications/tools/list_changed") || !strings.Contains(n, tag) {
		t.Fatalf("after the reload: %s", n)
	}
	cancel()
	<-done
	select {
	case m := <-out:
		t.Errorf("sent %s after the stream ended", m)
	default:
	}
	bad, _ := jsonrpc.ParseMessage([]byte(`{"jsonrpc":"2.0","id":2,"method":"subscriptions/listen","params":{"notifications":[]}}`))
	if _, rpcErr := e.g.listen(context.Background(), "a", "echo", bad, mcpserve.Request{}, out); jsonrpc.ParseError(rpcErr).Code != jsonrpc.CodeInvalidParams {
		t.Errorf("params that do not parse: %s", rpcErr)
	}
}
