package mcpserve

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestSessionLifecycle: initialize opens a session; every other message
// must name it; DELETE ends it (and the session behind it).
func TestSessionLifecycle(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(_ context.Context, m *jsonrpc.Message, peer mcpwire.Peer) { reply(peer, m, `{}`) })
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "initialize first") {
		t.Errorf("no session: %s %s", resp.Status, body)
	}
	resp = post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", "forged")
	if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "initialize again") {
		t.Errorf("unknown session: %s %s", resp.Status, body)
	}
	sid := initialize(t, te.url, "2025-11-25")
	resp = post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Session-Id", sid)
	if body := readAll(t, resp); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != sid || !strings.Contains(body, `"result":{}`) {
		t.Errorf("request: %s %s", resp.Status, body)
	}
	req, _ := http.NewRequest(http.MethodDelete, te.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if te.e.Sessions() != 0 {
		t.Errorf("after DELETE: %d open", te.e.Sessions())
	}
	// The session ends behind the answer.
	s := te.session(0)
	waitFor(t, "the deleted session closed", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.closed
	})
	resp = post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "Mcp-Session-Id", sid)
	if readAll(t, resp); resp.StatusCode != http.StatusNotFound {
		t.Errorf("after DELETE: %s", resp.Status)
	}
}

// TestSessionCap: past MaxSessions an initialize is refused with 429
// before a session starts; ending one makes room.
func TestSessionCap(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{MaxSessions: 2}, nil)
	a := initialize(t, te.url, "2025-11-25")
	initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, "max_per_agent") {
		t.Errorf("third session: %s %s", resp.Status, body)
	}
	te.mu.Lock()
	started := len(te.sess)
	te.mu.Unlock()
	if started != 2 {
		t.Errorf("%d sessions started, want 2 (the refused one must not start)", started)
	}
	req, _ := http.NewRequest(http.MethodDelete, te.url, nil)
	req.Header.Set("Mcp-Session-Id", a)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatal(resp, err)
	}
	// Its place is free once it has stopped (it is counted until then).
	waitFor(t, "the deleted session closed", func() bool {
		s := te.session(0)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.closed
	})
	waitFor(t, "the deleted session's place", func() bool {
		te.e.mu.Lock()
		defer te.e.mu.Unlock()
		return te.e.stopping == 0
	})
	initialize(t, te.url, "2025-11-25")
}

// TestFactoryFails: a session that cannot start (the server is down) is
// 502 with the reason.
func TestFactoryFails(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{Legacy: func(context.Context, mcpwire.Peer) (Session, error) {
		return nil, errors.New("server \"x\" cannot start")
	}}, nil)
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "cannot start") || !strings.Contains(body, "-32000") {
		t.Errorf("%s %s", resp.Status, body)
	}
}

// TestNotifications: a notification is 202; a request sent as one (no id,
// or id null) is 400 and never answered, though the session sees it (to
// audit it).
func TestNotifications(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	sid := initialize(t, te.url, "2025-11-25")
	cases := []struct {
		body   string
		status int
	}{
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, http.StatusAccepted},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}`, http.StatusBadRequest},
		{`{"jsonrpc":"2.0","id":"tg-1","result":{}}`, http.StatusAccepted},
	}
	for _, c := range cases {
		resp := post(t, context.Background(), te.url, c.body, "Mcp-Session-Id", sid)
		if body := readAll(t, resp); resp.StatusCode != c.status {
			t.Errorf("%s: %s %s", c.body, resp.Status, body)
		}
	}
	if got := te.session(0).methods(); len(got) != 5 {
		t.Errorf("session saw %q, want initialize and all four", got)
	}
}

// TestJSONOnlyClient: a client that accepts only JSON gets its answer as
// JSON; what the request caused meanwhile waits for its GET stream.
func TestJSONOnlyClient(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(_ context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(jsonrpc.Notification("notifications/message", []byte(`{"level":"info","data":"hi"}`)), m.ID, true)
		reply(peer, m, `{"ok":true}`)
	})
	sid := initialize(t, te.url, "2025-11-25")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":5,"method":"x"}`, "Mcp-Session-Id", sid, "Accept", "application/json")
	if body := readAll(t, resp); resp.Header.Get("Content-Type") != "application/json" || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("%s %s", resp.Header.Get("Content-Type"), body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp = get(t, ctx, te.url, "Mcp-Session-Id", sid)
	defer resp.Body.Close()
	r := newSSEReader(resp.Body)
	r.next() // priming
	if ev, _ := r.next(); !strings.Contains(ev.data, `"data":"hi"`) {
		t.Errorf("GET stream got %+v, want the notification", ev)
	}
}

// TestGETStreamConflict: one GET stream per session.
func TestGETStreamConflict(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	sid := initialize(t, te.url, "2025-06-18")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := get(t, ctx, te.url, "Mcp-Session-Id", sid)
	defer first.Body.Close()
	waitFor(t, "the GET stream", func() bool {
		te.e.mu.Lock()
		hs := te.e.sessions[sid]
		te.e.mu.Unlock()
		hs.mu.Lock()
		defer hs.mu.Unlock()
		return hs.get != nil
	})
	second := get(t, context.Background(), te.url, "Mcp-Session-Id", sid)
	if readAll(t, second); second.StatusCode != http.StatusConflict {
		t.Errorf("second GET: %s", second.Status)
	}
	// An old client's GET stream has no ids and no priming event.
	te.session(0).peer.Send(jsonrpc.Notification("notifications/tools/list_changed", nil), nil, true)
	if ev, _ := newSSEReader(first.Body).next(); ev.id != "" || !strings.Contains(ev.data, "list_changed") {
		t.Errorf("old client's GET event %+v", ev)
	}
}

// TestUnroutedGoesToNewestStream: with no GET stream, a message that
// belongs to no request rides on the newest request stream.
func TestUnroutedGoesToNewestStream(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(jsonrpc.Notification("notifications/resources/list_changed", nil), nil, false)
		if release.wait(ctx) {
			reply(peer, m, `{}`)
		}
	})
	sid := initialize(t, te.url, "2025-06-18")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid)
	defer resp.Body.Close()
	r := newSSEReader(resp.Body)
	ev, _ := r.next()
	release.open()
	if !strings.Contains(ev.data, "resources/list_changed") {
		t.Errorf("request stream got %+v", ev)
	}
}

// TestSessionClosedWhileWaiting: a request waiting for its answer when
// the session ends gets 404 (JSON) or the end of its stream.
func TestSessionClosedWhileWaiting(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(ctx context.Context, _ *jsonrpc.Message, _ mcpwire.Peer) { <-ctx.Done() })
	sid := initialize(t, te.url, "2025-11-25")
	done := make(chan *http.Response, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, te.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Mcp-Session-Id", sid)
		resp, _ := http.DefaultClient.Do(req)
		done <- resp
	}()
	waitFor(t, "the request", func() bool { return len(te.session(0).methods()) == 2 })
	te.e.Close()
	select {
	case resp := <-done:
		if resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("answer after the session closed: %v", resp)
		} else {
			resp.Body.Close()
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the request was not answered when the session closed")
	}
	waitFor(t, "the request's context to end", func() bool { return te.session(0).wasCancelled("1") })
}

// TestIdleJanitor closes sessions nobody used for IdleTTL, but not one
// with a request in flight.
func TestIdleJanitor(t *testing.T) {
	t.Parallel()
	release := newGate()
	te := newTestEndpoint(t, Options{IdleTTL: 40 * time.Millisecond}, func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		if release.wait(ctx) {
			reply(peer, m, `{}`)
		}
	})
	initialize(t, te.url, "2025-11-25")
	busy := initialize(t, te.url, "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		if resp, err := http.DefaultClient.Do(mustReq(ctx, te.url, busy)); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, "the idle session to close", func() bool { return te.e.Sessions() == 1 })
	te.e.mu.Lock()
	_, ok := te.e.sessions[busy]
	te.e.mu.Unlock()
	if !ok {
		t.Error("the busy session was closed")
	}
	release.open()
}

func mustReq(ctx context.Context, url, sid string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	return req
}

// TestVersionFromInitialize: resumability follows the version initialize
// settled on, not what a later request's header claims.
func TestVersionFromInitialize(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, func(_ context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
		peer.Send(progress(1), m.ID, true)
		reply(peer, m, `{}`)
	})
	sid := initialize(t, te.url, "2025-06-18")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"x"}`, "Mcp-Session-Id", sid, mcpwire.HeaderProtocolVersion, "2025-11-25")
	if body := readAll(t, resp); strings.Contains(body, "id: ") {
		t.Errorf("a 2025-06-18 session got event ids: %q", body)
	}
}

// TestGETStreamSignalsListen: a session is started with a listen signal,
// which fires when the client opens its GET stream, not before (so the
// relay opens its downstream one only then).
func TestGETStreamSignalsListen(t *testing.T) {
	t.Parallel()
	listened := make(chan struct{}, 2)
	var te *testEndpoint
	te = newTestEndpoint(t, Options{Legacy: func(ctx context.Context, peer mcpwire.Peer) (Session, error) {
		sig := mcpwire.ListenFrom(ctx)
		if sig == nil {
			t.Error("a session started without a listen signal")
		} else {
			sig.OnListen(func() { listened <- struct{}{} })
		}
		s := &scripted{peer: peer}
		te.mu.Lock()
		te.sess = append(te.sess, s)
		te.mu.Unlock()
		return s, nil
	}}, nil)
	sid := initialize(t, te.url, "2025-06-18")
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "Mcp-Session-Id", sid)
	readAll(t, resp)
	select {
	case <-listened:
		t.Fatal("the signal fired before the client opened a GET stream")
	default:
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := get(t, ctx, te.url, "Mcp-Session-Id", sid)
	defer stream.Body.Close()
	select {
	case <-listened:
	case <-time.After(10 * time.Second):
		t.Fatal("the client's GET stream did not fire the signal")
	}
}
