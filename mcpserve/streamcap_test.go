package mcpserve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/internal/syncbuf"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestStreamCaps: the per-agent cap binds one agent without touching
// another, the total binds everyone, and a slot given back (twice, even)
// frees exactly one place.
func TestStreamCaps(t *testing.T) {
	t.Parallel()
	c := NewStreamCaps(2, 3)
	var rel []func()
	for range 2 {
		r, err := c.Take("a")
		if err != nil {
			t.Fatal(err)
		}
		rel = append(rel, r)
	}
	var ce *StreamCapError
	if _, err := c.Take("a"); !errors.As(err, &ce) || ce.Field != FieldStreamsPerAgent || ce.Max != 2 ||
		!strings.Contains(err.Error(), "gateway.streams.max_per_agent = 2") {
		t.Fatalf("third stream of a: %v", err)
	}
	rb, err := c.Take("b")
	if err != nil {
		t.Fatalf("b is not bound by a's cap: %v", err)
	}
	if _, err := c.Take("c"); !errors.As(err, &ce) || ce.Field != FieldStreamsTotal || !strings.Contains(err.Error(), "gateway.streams.max_total = 3") {
		t.Fatalf("fourth stream of the process: %v", err)
	}
	rel[0]()
	rel[0]() // a second release gives nothing more back
	if a, total := c.Open("a"); a != 1 || total != 2 {
		t.Fatalf("after one release: a holds %d, %d in total; want 1 and 2", a, total)
	}
	if _, err := c.Take("c"); err != nil {
		t.Fatalf("a freed place: %v", err)
	}
	if _, err := c.Take("c"); err == nil {
		t.Fatal("the total cap holds again once the freed place is taken")
	}
	rb()
	rel[1]()
	if a, _ := c.Open("a"); a != 0 {
		t.Fatalf("a holds %d after releasing all", a)
	}
}

// listenHandler holds every subscriptions/listen open until its request
// ends, as the gateway's does, counting the streams it serves.
func listenHandler(serving *sync.WaitGroup) *fakeHandler {
	return &fakeHandler{serve: func(ctx context.Context, m *jsonrpc.Message, _ Request, out mcpwire.Peer) {
		if m.Method != "subscriptions/listen" {
			out.Send((&jsonrpc.Message{ID: m.ID, Result: []byte(`{"resultType":"complete"}`)}).Encode(), m.ID, false)
			return
		}
		out.Send(jsonrpc.Notification("notifications/subscriptions/acknowledged", []byte(`{}`)), m.ID, true)
		serving.Done()
		<-ctx.Done()
	}}
}

var listenHeaders = []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "subscriptions/listen"}

// TestListenStreamCap is the attack of an agent opening listen streams
// without end: over gateway.streams.max_per_agent each is refused at once
// (429, the cap named) and never reaches the handler; closing one from
// the client's side frees its place.
func TestListenStreamCap(t *testing.T) {
	t.Parallel()
	caps := NewStreamCaps(3, 0)
	var serving sync.WaitGroup
	h := listenHandler(&serving)
	srv := httptest.NewServer(NewEndpoint(Options{Modern: h, Streams: caps.For("dev")}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body := modernBody("subscriptions/listen", `"notifications":{"toolsListChanged":true}`)
	var open []*http.Response
	serving.Add(3)
	for range 3 {
		resp := post(t, ctx, srv.URL, body, listenHeaders...)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream within the cap: %s %s", resp.Status, readAll(t, resp))
		}
		open = append(open, resp)
	}
	serving.Wait()
	for range 5 {
		resp := post(t, ctx, srv.URL, body, listenHeaders...)
		got := readAll(t, resp)
		if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(got, "gateway.streams.max_per_agent = 3") {
			t.Fatalf("stream over the cap: %s %s", resp.Status, got)
		}
	}
	// Other requests of the agent are not streams: they are not capped.
	if resp := post(t, ctx, srv.URL, modernBody("tools/list", ""), mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list"); resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/list at the stream cap: %s", resp.Status)
	}
	h.mu.Lock()
	listens := 0
	for _, m := range h.served {
		if m == "subscriptions/listen" {
			listens++
		}
	}
	h.mu.Unlock()
	if listens != 3 {
		t.Fatalf("the handler served %d listen streams, want 3 (refused ones must not reach it)", listens)
	}
	// The client closes one: its place is free once the handler is done.
	open[0].Body.Close()
	waitFor(t, "the closed stream's place", func() bool { a, _ := caps.Open("dev"); return a == 2 })
	serving.Add(1)
	resp := post(t, ctx, srv.URL, body, listenHeaders...)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream after one closed: %s %s", resp.Status, readAll(t, resp))
	}
	serving.Wait()
	resp.Body.Close()
	for _, r := range open[1:] {
		r.Body.Close()
	}
	waitFor(t, "every place back", func() bool { a, _ := caps.Open("dev"); return a == 0 })
}

// TestListenStreamServerEnds: a stream the server side ends (its handler
// returns with the answer) gives its place back too.
func TestListenStreamServerEnds(t *testing.T) {
	t.Parallel()
	caps := NewStreamCaps(1, 1)
	end := make(chan struct{})
	h := &fakeHandler{serve: func(ctx context.Context, m *jsonrpc.Message, _ Request, out mcpwire.Peer) {
		out.Send(jsonrpc.Notification("notifications/subscriptions/acknowledged", []byte(`{}`)), m.ID, true)
		select {
		case <-end:
		case <-ctx.Done():
		}
		out.Send((&jsonrpc.Message{ID: m.ID, Result: []byte(`{}`)}).Encode(), m.ID, false)
	}}
	srv := httptest.NewServer(NewEndpoint(Options{Modern: h, Streams: caps.For("dev")}))
	defer srv.Close()
	body := modernBody("subscriptions/listen", "")
	resp := post(t, context.Background(), srv.URL, body, listenHeaders...)
	waitFor(t, "the stream open", func() bool { a, _ := caps.Open("dev"); return a == 1 })
	close(end)
	readAll(t, resp) // the server ended it: the body ends
	waitFor(t, "the place back", func() bool { _, n := caps.Open("dev"); return n == 0 })
}

// TestGETStreamCap: a 2025 session's GET streams count against the same
// cap: the agent's sessions together hold no more than it.
func TestGETStreamCap(t *testing.T) {
	t.Parallel()
	caps := NewStreamCaps(2, 0)
	te := newTestEndpoint(t, Options{Streams: caps.For("dev")}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var streams []*http.Response
	for range 2 {
		sid := initialize(t, te.url, "2025-06-18")
		resp := get(t, ctx, te.url, mcpwire.HeaderSessionID, sid)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET within the cap: %s", resp.Status)
		}
		streams = append(streams, resp)
	}
	waitFor(t, "two GET streams", func() bool { a, _ := caps.Open("dev"); return a == 2 })
	sid := initialize(t, te.url, "2025-06-18")
	resp := get(t, ctx, te.url, mcpwire.HeaderSessionID, sid)
	if got := readAll(t, resp); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(got, "gateway.streams.max_per_agent = 2") {
		t.Fatalf("GET over the cap: %s %s", resp.Status, got)
	}
	for _, r := range streams {
		r.Body.Close()
	}
	waitFor(t, "the places back", func() bool { a, _ := caps.Open("dev"); return a == 0 })
}

// TestStdioListenStreamCap: over stdio a listen over the cap is answered
// with the cap's error, and the streams within it are served.
func TestStdioListenStreamCap(t *testing.T) {
	t.Parallel()
	caps := NewStreamCaps(2, 0)
	var serving sync.WaitGroup
	serving.Add(2)
	h := listenHandler(&serving)
	inR, inW := io.Pipe()
	var out syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, Options{Modern: h, Streams: caps.For("dev")}, inR, &out) }()
	for i := range 3 {
		line := strings.Replace(modernBody("subscriptions/listen", ""), `"id":1`, `"id":`+string(rune('1'+i)), 1)
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	serving.Wait()
	waitFor(t, "the refusal of the third", func() bool {
		return strings.Contains(out.String(), `"id":3`) && strings.Contains(out.String(), "gateway.streams.max_per_agent = 2")
	})
	cancel()
	inW.Close()
	<-done
	if a, _ := caps.Open("dev"); a != 0 {
		t.Fatalf("%d stream places still held after the instance ended", a)
	}
}
