package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/toolgate/toolgate/internal/syncbuf"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// listenServer is a real 2026-07-28 server (mcp-go, streamable HTTP)
// whose subscriptions/listen streams the test can end from the server's
// side (end), and which counts them.
type listenServer struct {
	*server.MCPServer
	srv *httptest.Server

	mu     sync.Mutex
	open   map[int]context.CancelFunc
	next   int
	listen int // subscriptions/listen requests received
}

// newListenServer starts one; opts are the server's capabilities.
func newListenServer(t *testing.T, opts ...server.ServerOption) *listenServer {
	t.Helper()
	s := server.NewMCPServer("listen-peer", "1.0.0", opts...)
	s.AddTool(mcp.NewTool("echo"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	h := server.NewStreamableHTTPServer(s)
	ls := &listenServer{MCPServer: s, open: map[int]context.CancelFunc{}}
	ls.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if m, err := jsonrpc.ParseMessage(body); err == nil && m.Method == "subscriptions/listen" {
				ctx, cancel := context.WithCancel(r.Context())
				defer cancel()
				ls.mu.Lock()
				ls.listen++
				ls.next++
				id := ls.next
				ls.open[id] = cancel
				ls.mu.Unlock()
				defer func() {
					ls.mu.Lock()
					delete(ls.open, id)
					ls.mu.Unlock()
				}()
				r = r.WithContext(ctx)
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ls.srv.Close)
	return ls
}

// counts reports the listen requests received and the streams open.
func (ls *listenServer) counts() (received, open int) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.listen, len(ls.open)
}

// end ends every open listen stream from the server's side.
func (ls *listenServer) end() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for _, cancel := range ls.open {
		cancel()
	}
}

// allLists are the capabilities of a server whose three lists change.
func allLists() []server.ServerOption {
	return []server.ServerOption{server.WithToolCapabilities(true), server.WithPromptCapabilities(true), server.WithResourceCapabilities(false, true)}
}

// count is how many messages rec was sent that contain substr.
func (r *recorder) count(substr string) int {
	n := 0
	for _, s := range r.all() {
		if strings.Contains(s.msg, substr) {
			n++
		}
	}
	return n
}

// TestBridgeListenReopens: the bridge's listen stream, ended by the
// server and then dropped with its connection, is opened again each time;
// after each reopen the client hears every list the server established
// as changed, once, and the ToolsChanged hook runs; a change the server
// makes on the reopened stream reaches the client.
func TestBridgeListenReopens(t *testing.T) {
	t.Parallel()
	ls := newListenServer(t, allLists()...)
	rec := newRecorder()
	changed := make(chan struct{}, 8)
	startBridge(t, ls.srv.URL, rec, Hooks{CallTool: forwardAll, ToolsChanged: func(context.Context, *Session) { changed <- struct{}{} }})
	servertest.WaitFor(t, "the first listen stream", func() bool { _, open := ls.counts(); return open == 1 })
	hook := func(why string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("the ToolsChanged hook did not run (%s)", why)
		}
	}
	lists := []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"}
	for i, why := range []string{"the server ended the stream", "the stream's connection dropped"} {
		if n := rec.count("list_changed"); n != 4*i {
			t.Fatalf("%d list changes before the stream ended, want %d", n, 4*i)
		}
		base := map[string]int{}
		for _, l := range lists {
			base[l] = rec.count(l)
		}
		if i == 0 {
			ls.end()
		} else {
			ls.srv.CloseClientConnections()
		}
		for _, l := range lists {
			servertest.WaitFor(t, l+" after a reopen ("+why+")", func() bool { return rec.count(l) > base[l] })
		}
		hook(why)
		// A change the server makes now reaches the client on the
		// reopened stream (acknowledged, so the server holds it).
		ls.AddTool(mcp.NewTool("added"+strconv.Itoa(i)), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
		servertest.WaitFor(t, "the server's change on the reopened stream", func() bool { return rec.count(lists[0]) == 2*(i+1) })
		hook("a change on the reopened stream")
	}
	for _, l := range lists[1:] {
		if n := rec.count(l); n != 2 {
			t.Errorf("%s sent %d times over two reopens, want once each", l, n)
		}
	}
	if received, open := ls.counts(); received != 3 || open != 1 {
		t.Errorf("%d listen requests (%d open), want 3 (the first, two reopens) and one open", received, open)
	}
	for _, s := range rec.all() {
		if strings.Contains(s.msg, "list_changed") && (!s.droppable || strings.Contains(s.msg, "subscriptionId")) {
			t.Errorf("relayed %+v", s)
		}
	}
}

// closeBridge closes b, failing the test when that takes long, and checks
// that its listen loop ended.
func closeBridge(t *testing.T, b *Bridge) {
	t.Helper()
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	select {
	case <-b.listenEnded:
	default:
		t.Fatal("the listen loop outlived Close")
	}
}

// TestBridgeListenStopsWithSession: closing the session ends its stream,
// its listen loop and every goroutine the bridge started, whether the
// loop holds a stream or waits between two.
func TestBridgeListenStopsWithSession(t *testing.T) {
	// Not parallel: it counts the process's goroutines (the parallel
	// tests wait until the others are done).
	ls := newListenServer(t, allLists()...)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	cfg := &transport.Config{ID: "modern", URL: ls.srv.URL, Timeout: 10 * time.Second, HTTPClient: &http.Client{Transport: tr}}
	if _, _, err := Probe(context.Background(), cfg, ClientInfo{Name: "warm-up"}); err != nil {
		t.Fatal(err)
	}
	tr.CloseIdleConnections()
	before := runtime.NumGoroutine()
	gone := func(what string) {
		t.Helper()
		servertest.WaitFor(t, "the server's streams to end ("+what+")", func() bool { _, open := ls.counts(); return open == 0 })
		tr.CloseIdleConnections()
		servertest.WaitFor(t, "the bridge's goroutines to end ("+what+")", func() bool { return runtime.NumGoroutine() <= before })
	}

	rec := newRecorder()
	b := newBridge(t, cfg, rec, Hooks{CallTool: forwardAll})
	initBridge(t, b, rec)
	servertest.WaitFor(t, "the listen stream", func() bool { _, open := ls.counts(); return open == 1 })
	closeBridge(t, b)
	gone("closed holding a stream")

	b = newBridge(t, cfg, rec, Hooks{CallTool: forwardAll})
	waiting := make(chan time.Duration, 1)
	b.listenWait = func(ctx context.Context, d time.Duration) bool {
		waiting <- d
		<-ctx.Done()
		return false
	}
	initBridge(t, b, rec)
	servertest.WaitFor(t, "the listen stream", func() bool { _, open := ls.counts(); return open == 1 })
	ls.end()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not wait to reopen the ended stream")
	}
	closeBridge(t, b)
	if received, _ := ls.counts(); received != 2 {
		t.Errorf("%d listen requests, want 2 (one per bridge: the second closed before reopening)", received)
	}
	gone("closed between streams")
}

// scripted2026 is a 2026-07-28 server whose tools list changes (its
// discovery says so) and which gives every subscriptions/listen answer's
// body, counting them.
func scripted2026(t *testing.T, listens *atomic.Int32, answer func(id json.RawMessage) []byte) string {
	t.Helper()
	return servertest.ScriptedHTTP(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "server/discover":
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{"listChanged":true}}}`)}).Encode())
		case "subscriptions/listen":
			listens.Add(1)
			w.Write(answer(m.ID))
		default:
			http.Error(w, "no", http.StatusNotFound)
		}
	})
}

// listenError answers subscriptions/listen with a JSON-RPC error.
func listenError(code int) func(id json.RawMessage) []byte {
	return func(id json.RawMessage) []byte { return jsonrpc.ErrorResponse(id, code, "no listen here") }
}

// TestBridgeListenRefused: a server that refuses subscriptions/listen
// (-32601), or acknowledges none of the list changes asked for and ends
// the stream, is asked once; the loop stops and says why once, at info. A
// real server whose discovery announces no list changes is not asked.
func TestBridgeListenRefused(t *testing.T) {
	t.Parallel()
	var refused, none atomic.Int32
	quiet := newListenServer(t, server.WithToolCapabilities(false))
	cases := []struct {
		name, url, why string
		asked          func() int
		want           int
	}{
		{"method not found", scripted2026(t, &refused, listenError(jsonrpc.CodeMethodNotFound)),
			"the server refused subscriptions/listen: no listen here (-32601)", func() int { return int(refused.Load()) }, 1},
		{"nothing established", scripted2026(t, &none, func(id json.RawMessage) []byte {
			return []byte(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{}}}` + "\n" +
				string((&jsonrpc.Message{ID: id, Result: json.RawMessage(`{}`)}).Encode()) + "\n")
		}), "establishes none of the list changes", func() int { return int(none.Load()) }, 1},
		{"none announced", quiet.srv.URL, "", func() int { n, _ := quiet.counts(); return n }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs syncbuf.Buffer
			rec := newRecorder()
			b := newBridge(t, &transport.Config{ID: "modern", URL: c.url, Timeout: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))}, rec, Hooks{CallTool: forwardAll})
			b.listenWait = func(context.Context, time.Duration) bool {
				t.Error("the loop waited to reopen a refused stream")
				return false
			}
			initBridge(t, b, rec)
			select {
			case <-b.listenEnded:
			case <-time.After(10 * time.Second):
				t.Fatal("the listen loop goes on after the refusal")
			}
			if n := c.asked(); n != c.want {
				t.Errorf("asked %d times, want %d", n, c.want)
			}
			n := strings.Count(logs.String(), "level=INFO msg=\"the bridged session hears no list changes")
			if c.why != "" && (n != 1 || !strings.Contains(logs.String(), c.why)) || c.why == "" && n != 0 {
				t.Errorf("logged %d times at info, want %q:\n%s", n, c.why, logs.String())
			}
			if rec.has("list_changed") {
				t.Errorf("the client heard a change: %v", rec.all())
			}
		})
	}
}

// TestBridgeListenBackoff: a server that fails every listen (not a
// refusal) is asked again after waits that double to the cap, never
// without one; Close ends the loop while it waits.
func TestBridgeListenBackoff(t *testing.T) {
	t.Parallel()
	var listens atomic.Int32
	rec := newRecorder()
	b := newBridge(t, &transport.Config{ID: "modern", URL: scripted2026(t, &listens, listenError(jsonrpc.CodeInternalError)), Timeout: 10 * time.Second}, rec, Hooks{CallTool: forwardAll})
	waits := make(chan time.Duration)
	b.listenWait = func(ctx context.Context, d time.Duration) bool {
		select {
		case waits <- d:
			return true
		case <-ctx.Done():
			return false
		}
	}
	initBridge(t, b, rec)
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	var got []time.Duration
	for range want {
		select {
		case d := <-waits:
			got = append(got, d)
		case <-time.After(10 * time.Second):
			t.Fatalf("waits %v, then none", got)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	closeBridge(t, b)
	if n := listens.Load(); n < int32(len(want)) || n > int32(len(want))+1 {
		t.Errorf("%d listen requests over %d waits", n, len(want))
	}
}

// TestReopenDelay: the wait before a reopen doubles from 100 ms to the
// cap and starts again after a stream that stayed open a while.
func TestReopenDelay(t *testing.T) {
	t.Parallel()
	var got []time.Duration
	var d time.Duration
	for range 8 {
		d = reopenDelay(d, time.Second)
		got = append(got, d)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond, 3200 * time.Millisecond, 5 * time.Second, 5 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if d := reopenDelay(5*time.Second, listenStable); d != listenBackoffMin {
		t.Errorf("after a stable stream the wait is %v, want %v", d, listenBackoffMin)
	}
}
