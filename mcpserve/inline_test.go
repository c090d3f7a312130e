package mcpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// inlineHints is what a Session that serves a call on the POST's
// goroutine (the relay, mcpproxy.InlineHints) asks of its hints.
type inlineHints interface {
	ServeInline() bool
	Answering()
}

// inlining is a scripted session that serves a tools/call the way the
// relay does: inside HandleClient when the stream allows it, telling the
// stream before it answers.
type inlining struct {
	*scripted
	stacks chan string // the stack of each inline call
}

func (s *inlining) HandleClient(ctx context.Context, m *jsonrpc.Message) {
	h, ok := hintsOf(ctx).(inlineHints)
	if m.Kind() != jsonrpc.KindRequest || m.Method != "tools/call" || !ok || !h.ServeInline() {
		s.scripted.HandleClient(ctx, m)
		return
	}
	buf := make([]byte, 64<<10)
	s.stacks <- string(buf[:runtime.Stack(buf, false)])
	s.handle(ctx, m, answering{s.peer, h})
	if ctx.Err() != nil {
		s.mu.Lock()
		s.cancelled = append(s.cancelled, string(m.ID))
		s.mu.Unlock()
	}
}

// answering is a Peer that tells the stream before a call's answer.
type answering struct {
	mcpwire.Peer
	h inlineHints
}

func (a answering) Send(msg []byte, route json.RawMessage, droppable bool) {
	if jsonrpc.IsResponseTo(msg, route) {
		a.h.Answering()
	}
	a.Peer.Send(msg, route, droppable)
}

func newInlineEndpoint(t *testing.T, handle func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer)) (*testEndpoint, chan string) {
	t.Helper()
	stacks := make(chan string, 8)
	var te *testEndpoint
	te = newTestEndpoint(t, Options{Legacy: func(_ context.Context, peer mcpwire.Peer) (Session, error) {
		s := &scripted{peer: peer, handle: handle}
		te.mu.Lock()
		te.sess = append(te.sess, s)
		te.mu.Unlock()
		return &inlining{scripted: s, stacks: stacks}, nil
	}}, nil)
	return te, stacks
}

const toolsCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"t","arguments":{}}}`

// TestInlineCallAnsweredOnItsPOST: a plain tools/call is served on the
// goroutine of its POST and answered as plain JSON; any other request is
// not offered it.
func TestInlineCallAnsweredOnItsPOST(t *testing.T) {
	t.Parallel()
	te, stacks := newInlineEndpoint(t, func(_ context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		reply(peer, m, `{"content":[]}`)
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, toolsCall, "Mcp-Session-Id", sid)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"id":7`) {
		t.Fatalf("inline call answered %s %q %q", resp.Status, resp.Header.Get("Content-Type"), body)
	}
	select {
	case s := <-stacks:
		if !strings.Contains(s, "mcpserve.(*Endpoint).serveInline") {
			t.Fatalf("the call ran on a goroutine other than its POST's:\n%s", s)
		}
	default:
		t.Fatal("the tools/call was not served inline")
	}
	resp = post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, "Mcp-Session-Id", sid)
	readAll(t, resp)
	select {
	case <-stacks:
		t.Fatal("a tools/list was served inline")
	default:
	}
}

// TestInlineCallStreamsWhatComesFirst: a call served inline that sends a
// progress notification and then waits for the client to have read it
// (as a call waits for the client's answer to an elicitation) gets its
// stream at once: the progress, then the answer, on one SSE response.
func TestInlineCallStreamsWhatComesFirst(t *testing.T) {
	t.Parallel()
	seen := make(chan struct{})
	te, _ := newInlineEndpoint(t, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		select {
		case <-seen:
		case <-time.After(10 * time.Second):
			t.Error("the client never saw the progress sent before the answer")
		}
		reply(peer, m, `{"content":[]}`)
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, toolsCall, "Mcp-Session-Id", sid)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want an SSE stream", ct)
	}
	r := newSSEReader(resp.Body)
	var first sseEvent
	for {
		ev, ok := r.next()
		if !ok {
			t.Fatal("stream ended before the progress")
		}
		if ev.data != "" {
			first = ev
			break
		}
	}
	if !strings.Contains(first.data, "notifications/progress") {
		t.Fatalf("first event %q, want the progress", first.data)
	}
	close(seen)
	for {
		ev, ok := r.next()
		if !ok {
			t.Fatal("stream ended before the answer")
		}
		if ev.data != "" {
			if !strings.Contains(ev.data, `"id":7`) {
				t.Fatalf("second event %q, want the answer", ev.data)
			}
			return
		}
	}
}

// TestInlineCallCancelledWhenClientLeaves: a client that goes away while
// its call is served inline, before anything was sent, ends the call's
// context at once, as when the call runs elsewhere.
func TestInlineCallCancelledWhenClientLeaves(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	te, _ := newInlineEndpoint(t, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		close(started)
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
	})
	sid := initialize(t, te.url, "2025-06-18")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, te.url, strings.NewReader(toolsCall))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-started
	cancel()
	<-done
	waitFor(t, "the inline call's cancellation", func() bool { return te.session(0).wasCancelled("7") })
}
