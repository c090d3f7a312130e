package mcpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

func progress(n int) []byte {
	return jsonrpc.Notification("notifications/progress", []byte(`{"progressToken":"p","progress":`+string(rune('0'+n))+`}`))
}

// gate is a handler step a test releases.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate  { return &gate{ch: make(chan struct{})} }
func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }
func (g *gate) wait(ctx context.Context) bool {
	select {
	case <-g.ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// TestPrimingEventAndIDs: a 2025-11-25 client's POST stream opens with a
// priming event (id, retry, empty data) and numbers every event
// "<stream>:<n>"; a 2025-06-18 client's stream is as before (no ids, no
// priming).
func TestPrimingEventAndIDs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version string
		ids     bool
	}{{"2025-11-25", true}, {"2025-06-18", false}, {"2025-03-26", false}} {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			te := newTestEndpoint(t, Options{}, func(_ context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
				peer.Send(progress(1), m.ID, true)
				reply(peer, m, `{"ok":true}`)
			})
			sid := initialize(t, te.url, c.version)
			resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`, "Mcp-Session-Id", sid, mcpwire.HeaderProtocolVersion, c.version)
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Fatalf("content type %q", ct)
			}
			r := newSSEReader(resp.Body)
			var evs []sseEvent
			for {
				ev, ok := r.next()
				if !ok {
					break
				}
				evs = append(evs, ev)
			}
			if !c.ids {
				if len(evs) != 2 || evs[0].id != "" || evs[1].id != "" || !strings.Contains(evs[1].data, `"id":7`) {
					t.Fatalf("old client's events = %+v, want progress and response without ids", evs)
				}
				return
			}
			if len(evs) != 3 {
				t.Fatalf("events = %+v, want priming, progress, response", evs)
			}
			if evs[0].data != "" || !evs[0].hasRetry || evs[0].retry != 1000 || !strings.HasSuffix(evs[0].id, ":0") {
				t.Errorf("priming event = %+v", evs[0])
			}
			num := strings.TrimSuffix(evs[0].id, ":0")
			if evs[1].id != num+":1" || evs[2].id != num+":2" || !strings.Contains(evs[2].data, `"result"`) {
				t.Errorf("events = %+v, want ids %s:1 and %s:2", evs, num, num)
			}
		})
	}
}

// TestResumeAfterDisconnect: a resumable client whose connection breaks
// mid-call is not cancelled; its GET with Last-Event-ID gets the events
// it missed and then the rest of the stream, up to the response.
func TestResumeAfterDisconnect(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		if !release.wait(ctx) {
			return
		}
		peer.Send(progress(2), m.ID, true)
		reply(peer, m, `{"done":true}`)
	})
	sid := initialize(t, te.url, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, te.url, `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}`, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	priming, _ := r.next()
	first, _ := r.next()
	if !strings.Contains(first.data, "notifications/progress") {
		t.Fatalf("first event %+v", first)
	}
	cancel() // the connection breaks
	resp.Body.Close()
	release.open()

	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, priming.id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("resume: %s %s", resp.Status, readAll(t, resp))
	}
	r = newSSEReader(resp.Body)
	var got []sseEvent
	for {
		ev, ok := r.next()
		if !ok {
			break
		}
		got = append(got, ev)
	}
	resp.Body.Close()
	if len(got) != 3 || got[0].id != first.id || !strings.Contains(got[1].data, `"progress":2`) || !strings.Contains(got[2].data, `"done":true`) {
		t.Fatalf("resumed stream = %+v, want the missed event %s, the second progress, the response", got, first.id)
	}
	if te.session(0).wasCancelled(`"a"`) {
		t.Error("the request was cancelled although the client resumed it")
	}
}

// TestResumeFromLaterEvent: a resume from an event replays only what
// followed it.
func TestResumeFromLaterEvent(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		peer.Send(progress(2), m.ID, true)
		if release.wait(ctx) {
			reply(peer, m, `{}`)
		}
	})
	sid := initialize(t, te.url, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	r.next()
	e1, _ := r.next()
	e2, _ := r.next()
	cancel()
	resp.Body.Close()
	release.open()
	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, e1.id)
	r = newSSEReader(resp.Body)
	defer resp.Body.Close()
	a, _ := r.next()
	b, _ := r.next()
	if a.id != e2.id || !strings.Contains(b.data, `"result"`) {
		t.Fatalf("resume from %s gave %+v then %+v", e1.id, a, b)
	}
}

// TestResumeGraceExpires: a client that goes away and does not come back
// still cancels its request, once the grace period is over; the stream
// cannot be resumed after that.
func TestResumeGraceExpires(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{ResumeGrace: 50 * time.Millisecond}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		<-ctx.Done()
	})
	sid := initialize(t, te.url, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, te.url, `{"jsonrpc":"2.0","id":3,"method":"x"}`, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	priming, _ := r.next()
	r.next()
	cancel()
	resp.Body.Close()
	waitFor(t, "the request to be cancelled", func() bool { return te.session(0).wasCancelled("3") })
	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, priming.id)
	if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "nothing to resume") {
		t.Errorf("resume after the grace = %s %s, want 404", resp.Status, body)
	}
}

// TestOldClientDisconnectCancels: a client that cannot resume cancels its
// request by going away, at once (the grace is for resumable streams).
func TestOldClientDisconnectCancels(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{ResumeGrace: time.Hour}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		<-ctx.Done()
	})
	for i, version := range []string{"2025-06-18", "2025-11-25"} {
		sid := initialize(t, te.url, version)
		s := te.session(i)
		ctx, cancel := context.WithCancel(context.Background())
		if version == "2025-06-18" {
			resp := post(t, ctx, te.url, `{"jsonrpc":"2.0","id":9,"method":"x"}`, "Mcp-Session-Id", sid)
			newSSEReader(resp.Body).next()
			cancel()
			resp.Body.Close()
		} else {
			// A JSON answer is not resumable: nothing went out yet.
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, te.url, strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"x"}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Mcp-Session-Id", sid)
			done := make(chan struct{})
			go func() {
				defer close(done)
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			waitFor(t, "the request to arrive", func() bool { return len(s.methods()) == 2 })
			cancel()
			<-done
		}
		waitFor(t, version+" request cancelled", func() bool { return s.wasCancelled("9") })
	}
}

// TestStreamedHint: when the server answered with a stream, the client
// gets a stream (priming event first) even for an answer that came
// alone; without the hint such an answer is plain JSON.
func TestStreamedHint(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		if m.Method == "streamed" {
			hintsOf(ctx).Streamed()
		}
		reply(peer, m, `{}`)
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"plain"}`, "Mcp-Session-Id", sid)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("plain answer content type %q, want application/json", ct)
	}
	readAll(t, resp)
	resp = post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":2,"method":"streamed"}`, "Mcp-Session-Id", sid)
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("streamed answer content type %q, want text/event-stream", ct)
	}
	r := newSSEReader(resp.Body)
	p, _ := r.next()
	a, _ := r.next()
	if p.data != "" || !p.hasRetry || !strings.Contains(a.data, `"id":2`) {
		t.Errorf("stream = %+v, %+v", p, a)
	}
}

// TestPauseMirrored: a server closing its stream mid-call is mirrored:
// the client's stream gets the server's retry and ends; the response then
// comes on the client's GET with Last-Event-ID.
func TestPauseMirrored(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		h := hintsOf(ctx)
		h.Streamed()
		peer.Send(progress(1), m.ID, true)
		h.Paused(200 * time.Millisecond)
		if release.wait(ctx) {
			reply(peer, m, `{"text":"Reconnection test completed successfully"}`)
		}
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_reconnection"}}`, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	var evs []sseEvent
	for {
		ev, ok := r.next()
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	resp.Body.Close()
	if len(evs) != 3 || evs[0].data != "" || !strings.Contains(evs[1].data, "progress") || !evs[2].hasRetry || evs[2].retry != 200 {
		t.Fatalf("paused stream = %+v, want priming, progress, retry 200 then the end", evs)
	}
	release.open()
	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, evs[1].id)
	r = newSSEReader(resp.Body)
	ev, _ := r.next()
	_, more := r.next()
	resp.Body.Close()
	if !strings.Contains(ev.data, "Reconnection test completed") || more {
		t.Errorf("resumed GET = %+v (more: %v), want the response and the end", ev, more)
	}
}

// TestPauseIgnoredForOldClient: a client that cannot resume keeps its
// stream open through a server's pause and gets the response on it.
func TestPauseIgnoredForOldClient(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		h := hintsOf(ctx)
		h.Streamed()
		h.Paused(10 * time.Millisecond)
		reply(peer, m, `{"ok":1}`)
	})
	sid := initialize(t, te.url, "2025-06-18")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid)
	body := readAll(t, resp)
	if resp.Header.Get("Content-Type") != "text/event-stream" || strings.Contains(body, "retry:") || !strings.Contains(body, `"ok":1`) {
		t.Errorf("old client's stream = %q", body)
	}
}

// TestTakeover: a resume while the old connection still writes the
// stream takes it over; the old response ends.
func TestTakeover(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		if release.wait(ctx) {
			reply(peer, m, `{}`)
		}
	})
	sid := initialize(t, te.url, "2025-11-25")
	old := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid)
	defer old.Body.Close()
	r := newSSEReader(old.Body)
	r.next()
	e1, _ := r.next()
	resp := get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, e1.id)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("takeover: %s", resp.Status)
	}
	if _, more := r.next(); more {
		t.Error("the old connection still carries the stream")
	}
	release.open()
	ev, _ := newSSEReader(resp.Body).next()
	if !strings.Contains(ev.data, `"result"`) {
		t.Errorf("taken-over stream gave %+v", ev)
	}
}

// TestResumeAnsweredStream: a stream whose response was written can still
// be resumed for a while (its response is kept), for a client whose
// connection broke as it was written.
func TestResumeAnsweredStream(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		hintsOf(ctx).Streamed()
		reply(peer, m, `{"kept":true}`)
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	priming, _ := r.next()
	r.next()
	resp.Body.Close()
	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, priming.id)
	body := readAll(t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"kept":true`) {
		t.Errorf("resume of an answered stream = %s %q", resp.Status, body)
	}
}

// TestResumeUnknown: an id naming no stream of the session is 404; an id
// toolgate did not issue is ignored (the standalone stream opens).
func TestResumeUnknown(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	sid := initialize(t, te.url, "2025-11-25")
	resp := get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, "99:1")
	if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown stream: %s %s", resp.Status, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp = get(t, ctx, te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, "not-ours")
	defer resp.Body.Close()
	ev, _ := newSSEReader(resp.Body).next()
	if resp.StatusCode != http.StatusOK || ev.id != "0:0" {
		t.Errorf("foreign id: %s, first event %+v; want the standalone stream's priming 0:0", resp.Status, ev)
	}
}

// TestStandaloneResume: the GET stream numbers its events across its
// connections; a GET with Last-Event-ID gets what it missed, then what
// waited for a stream.
func TestStandaloneResume(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	sid := initialize(t, te.url, "2025-11-25")
	peer := te.session(0).peer
	ctx, cancel := context.WithCancel(context.Background())
	resp := get(t, ctx, te.url, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	if p, _ := r.next(); p.id != "0:0" || !p.hasRetry {
		t.Fatalf("GET priming %+v", p)
	}
	note := func(n string) []byte { return jsonrpc.Notification("notifications/message", []byte(`{"n":`+n+`}`)) }
	peer.Send(note("1"), nil, false)
	peer.Send(note("2"), nil, false)
	e1, _ := r.next()
	e2, _ := r.next()
	if e1.id != "0:1" || e2.id != "0:2" {
		t.Fatalf("GET events %+v %+v", e1, e2)
	}
	cancel()
	resp.Body.Close()
	waitFor(t, "the GET stream to close", func() bool {
		te.e.mu.Lock()
		hs := te.e.sessions[sid]
		te.e.mu.Unlock()
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return hs.get == nil
	})
	peer.Send(note("3"), nil, false)
	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, "0:1")
	defer resp.Body.Close()
	r = newSSEReader(resp.Body)
	p, _ := r.next()
	a, _ := r.next()
	b, _ := r.next()
	if p.id != "0:1" || a.id != "0:2" || !strings.Contains(a.data, `"n":2`) || b.id != "0:3" || !strings.Contains(b.data, `"n":3`) {
		t.Errorf("resumed GET = %+v %+v %+v", p, a, b)
	}
}

// TestMCPGoClientPolls: mcp-go's client (a real 2025-11-25 client)
// follows a mirrored pause: it resumes with GET and gets its result.
func TestMCPGoClientPolls(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		if m.Method != "tools/call" {
			reply(peer, m, `{}`)
			return
		}
		h := hintsOf(ctx)
		h.Streamed()
		h.Paused(20 * time.Millisecond)
		reply(peer, m, `{"content":[{"type":"text","text":"after the poll"}]}`)
	})
	cl, err := client.NewStreamableHttpClient(te.url)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = "2025-11-25"
	req.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	if _, err := cl.Initialize(ctx, req); err != nil {
		t.Fatal(err)
	}
	res, err := cl.CallTool(ctx, mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "slow"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.Content)
	if !strings.Contains(string(b), "after the poll") {
		t.Errorf("result %s", b)
	}
}

// TestResumeAttacks: a Last-Event-ID is only ever resolved within the
// session that presents it: another session's stream, a stream number no
// session issued, or a number past any sequence reads nothing of anyone.
func TestResumeAttacks(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(jsonrpc.Notification("notifications/message", []byte(`{"data":"victim's secret"}`)), m.ID, true)
		if release.wait(ctx) {
			reply(peer, m, `{}`)
		}
	})
	defer release.open()
	victim := initialize(t, te.url, "2025-11-25")
	attacker := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", victim)
	defer resp.Body.Close()
	r := newSSEReader(resp.Body)
	priming, _ := r.next()
	r.next()
	for _, id := range []string{priming.id, "1:0", "2:0", "9223372036854775807:0", "1:9223372036854775807"} {
		g := get(t, context.Background(), te.url, "Mcp-Session-Id", attacker, mcpwire.HeaderLastEventID, id)
		body := readAll(t, g)
		if strings.Contains(body, "secret") || g.StatusCode == http.StatusOK && strings.Contains(body, `"result"`) {
			t.Errorf("Last-Event-ID %s from another session read %q", id, body)
		}
	}
	// Without a session, no resume at all.
	g := get(t, context.Background(), te.url, mcpwire.HeaderLastEventID, priming.id)
	if readAll(t, g); g.StatusCode != http.StatusBadRequest {
		t.Errorf("resume without a session: %s", g.Status)
	}
}

// TestClientResumedHint: the client resuming a paused stream is heard by
// the downstream transport (ClientResumed), so it can resume the server's
// stream then rather than after the server's retry.
func TestClientResumedHint(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		h := hintsOf(ctx)
		back, ok := h.(interface{ ClientResumed() <-chan struct{} })
		if !ok {
			reply(peer, m, `{"text":"no ClientResumed"}`)
			return
		}
		h.Streamed()
		peer.Send(progress(1), m.ID, true)
		h.Paused(time.Hour)
		select {
		case <-back.ClientResumed():
			reply(peer, m, `{"text":"client is back"}`)
		case <-time.After(5 * time.Second):
			reply(peer, m, `{"text":"the resume was not heard"}`)
		case <-ctx.Done():
		}
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_reconnection"}}`, "Mcp-Session-Id", sid)
	r := newSSEReader(resp.Body)
	var last sseEvent
	for {
		ev, ok := r.next()
		if !ok {
			break
		}
		if ev.id != "" {
			last = ev
		}
	}
	resp.Body.Close()
	resp = get(t, context.Background(), te.url, "Mcp-Session-Id", sid, mcpwire.HeaderLastEventID, last.id)
	r = newSSEReader(resp.Body)
	ev, _ := r.next()
	resp.Body.Close()
	if !strings.Contains(ev.data, "client is back") {
		t.Errorf("resumed GET = %+v, want the answer given once the client was back", ev)
	}
}
