package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestSessionRelay: requests and answers cross with their ids rewritten
// both ways; the client's ids come back as it sent them.
func TestSessionRelay(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, callText(`"c-1"`, "echo", `{"text":"hi"}`)))
	got := rec.wait(t, `"hi"`)
	if !strings.HasPrefix(got.msg, `{"jsonrpc":"2.0","id":"c-1","result":`) || got.route != `"c-1"` || got.droppable {
		t.Errorf("answer %+v", got)
	}
	s.HandleClient(context.Background(), msg(t, callText("2", "rpcerror", "")))
	if e := rec.wait(t, "tiny refuses"); !strings.Contains(e.msg, `"id":2,"error":{"code":-32099`) {
		t.Errorf("error answer %+v", e)
	}
	res, err := s.Request(context.Background(), "tools/list", nil)
	if err != nil || !strings.Contains(string(res), `"echo"`) {
		t.Errorf("own request: %s %v", res, err)
	}
	if _, err := s.Request(context.Background(), "nope/nope", nil); err == nil || !strings.Contains(err.Error(), "Method not found") {
		t.Errorf("own failing request: %v", err)
	}
}

// TestSessionRestart: a server that dies fails what is in flight with a
// reason naming it, comes back with the client's handshake and session
// state replayed, and the client is told its tools may have changed.
func TestSessionRestart(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	changed := make(chan struct{}, 4)
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll, ToolsChanged: func(context.Context, *Session) { changed <- struct{}{} }})
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"debug"}}`))
	rec.wait(t, `"id":"l"`)
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":"s","method":"resources/subscribe","params":{"uri":"file:///a"}}`))
	rec.wait(t, `"id":"s"`)
	s.HandleClient(context.Background(), msg(t, callText("10", "pid", "")))
	before := rec.wait(t, `"id":10`)
	s.HandleClient(context.Background(), msg(t, callText("11", "crash", "")))
	crashed := rec.wait(t, `"id":11`)
	if !strings.Contains(crashed.msg, `failed while the request was in flight`) || !strings.Contains(crashed.msg, "crashing on purpose") {
		t.Errorf("crash answer %s", crashed.msg)
	}
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no ToolsChanged after the restart")
	}
	rec.wait(t, "notifications/tools/list_changed")
	s.HandleClient(context.Background(), msg(t, callText("12", "pid", "")))
	after := rec.wait(t, `"id":12`)
	if before.msg == strings.Replace(after.msg, `"id":12`, `"id":10`, 1) {
		t.Error("the server process did not change")
	}
	s.HandleClient(context.Background(), msg(t, callText("13", "state", "")))
	if st := rec.wait(t, `"id":13`); !strings.Contains(st.msg, `debug|file:///a`) {
		t.Errorf("state after restart %s, want the log level and subscription replayed", st.msg)
	}
}

// TestSessionRestarting: while the server is down, requests fail at once
// with "restarting" rather than wait.
func TestSessionRestarting(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	fail := filepath.Join(t.TempDir(), "fail")
	s := startSession(t, tinyConfig("tiny", "TG_TINY_FAIL_IF="+fail), rec, Hooks{CallTool: forwardAll})
	// From now on the server refuses to start again.
	if err := os.WriteFile(fail, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.HandleClient(context.Background(), msg(t, callText("1", "crash", "")))
	rec.wait(t, `"id":1`)
	s.HandleClient(context.Background(), msg(t, callText("2", "echo", "")))
	if m := rec.wait(t, `"id":2`); !strings.Contains(m.msg, "restarting after a failure") {
		t.Errorf("while down: %s", m.msg)
	}
}

// TestSessionTimeout: a request the server does not answer in time fails
// with the bound, and the server is told to cancel it under its own id.
func TestSessionTimeout(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	cfg := tinyConfig("tiny")
	cfg.TimeoutFor = map[string]time.Duration{"hang": 50 * time.Millisecond}
	s := startSession(t, cfg, rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, callText("1", "hang", "")))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "did not answer tools/call within 50ms") {
		t.Errorf("timeout answer %s", m.msg)
	}
	waitCancelled(t, s, rec, "2")
}

// waitCancelled polls the tiny server until it recorded a cancellation.
func waitCancelled(t *testing.T, s *Session, rec *recorder, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for n := 100; ; n++ {
		cid := "9" + string(jsonrpc.IntID(int64(n)))
		s.HandleClient(context.Background(), msg(t, callText(cid, "cancelled", "")))
		if m := rec.wait(t, `"id":`+cid+`,`); strings.Contains(m.msg, `"text":"`+id) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was never told to cancel request %s", id)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestClientCancels: the client's notifications/cancelled (or its request
// context ending) stops the wait and tells the server under its own id.
func TestClientCancels(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, callText(`"h"`, "hang", "")))
	servertest.WaitFor(t, "the call to be pending", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.byClientID) == 1 })
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"h"}}`))
	if m := rec.wait(t, `"id":"h"`); !strings.Contains(m.msg, "canceled") {
		t.Errorf("cancelled call answered %s", m.msg)
	}
	waitCancelled(t, s, rec, "2")
	ctx, cancel := context.WithCancel(context.Background())
	s.HandleClient(ctx, msg(t, callText(`"g"`, "hang", "")))
	servertest.WaitFor(t, "the second call to be pending", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.byClientID) == 1 })
	cancel()
	rec.wait(t, `"id":"g"`)
}

// TestCloseFailsInFlight: closing the session answers what waits and
// stops the server.
func TestCloseFailsInFlight(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, callText("1", "hang", "")))
	servertest.WaitFor(t, "the call to be pending", func() bool { s.mu.Lock(); defer s.mu.Unlock(); return len(s.pending) == 1 })
	s.Close()
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "was closed") {
		t.Errorf("%s", m.msg)
	}
	if _, err := s.Request(context.Background(), "tools/list", nil); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("request after close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
}

// TestServerRequestsAndProgress: a server's request reaches the client
// under an id of the relay's and its answer goes back under the server's;
// progress finds the request that owns its token; a server withdrawing
// its request is mapped too.
func TestServerRequestsAndProgress(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	var s *Session
	rec.onRequest = func(m *jsonrpc.Message) {
		// Answer once the server withdrew the request (it still waits).
		for deadline := time.Now().Add(5 * time.Second); !rec.has("notifications/cancelled") && time.Now().Before(deadline); {
			time.Sleep(5 * time.Millisecond)
		}
		s.HandleClient(context.Background(), &jsonrpc.Message{ID: m.ID, Result: []byte(`{"model":"m"}`)})
	}
	s = startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"progress","arguments":{},"_meta":{"progressToken":"tok"}}}`))
	if p := rec.wait(t, "notifications/progress"); p.route != `"p"` || !p.droppable || !strings.Contains(p.msg, `"progressToken":"tok"`) {
		t.Errorf("progress %+v", p)
	}
	s.HandleClient(context.Background(), msg(t, callText(`"a"`, "ask", `{"withdraw":true}`)))
	req := rec.wait(t, "sampling/createMessage")
	// (stdio cannot tell which request caused it: no route.)
	if strings.Contains(req.msg, `"s1"`) {
		t.Errorf("server request reached the client as %+v", req)
	}
	if c := rec.wait(t, "notifications/cancelled"); strings.Contains(c.msg, `"s1"`) {
		t.Errorf("withdrawal not mapped: %s", c.msg)
	}
	if m := rec.wait(t, `"id":"a"`); !strings.Contains(m.msg, `client said {\"model\":\"m\"}`) {
		t.Errorf("answer %s", m.msg)
	}
	// A response to nothing is dropped.
	s.HandleClient(context.Background(), &jsonrpc.Message{ID: []byte("424242"), Result: []byte(`{}`)})
}

// TestMalformedServerOutput: a line that is not JSON-RPC, or an answer to
// no request, is skipped; the session carries on.
func TestMalformedServerOutput(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, callText("1", "garbage", "")))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "after garbage") {
		t.Errorf("%s", m.msg)
	}
}

// TestOversizedMessage: a server message past max_output ends the
// connection as a protocol failure naming the bound.
func TestOversizedMessage(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	cfg := tinyConfig("tiny")
	cfg.MaxMessage = 4096
	s := startSession(t, cfg, rec, Hooks{CallTool: forwardAll})
	s.HandleClient(context.Background(), msg(t, callText("1", "big", `{"n":100000}`)))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "longer than 4096 bytes") {
		t.Errorf("%s", m.msg)
	}
}

// TestListChangedHook: a server's list_changed runs the hook before the
// client hears of it.
func TestListChangedHook(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	ran := make(chan struct{}, 1)
	s := startSession(t, tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll, ToolsChanged: func(context.Context, *Session) { ran <- struct{}{} }})
	s.HandleClient(context.Background(), msg(t, callText("1", "changed", "")))
	rec.wait(t, "notifications/tools/list_changed")
	select {
	case <-ran:
	default:
		t.Error("the client heard of the change before the hook ran")
	}
	plain := newRecorder()
	p := startSession(t, tinyConfig("tiny"), plain, Hooks{CallTool: forwardAll})
	p.HandleClient(context.Background(), msg(t, callText("1", "changed", "")))
	plain.wait(t, "notifications/tools/list_changed")
}

func TestSessionDialFails(t *testing.T) {
	t.Parallel()
	if _, err := NewSession(context.Background(), &transport.Config{ID: "x"}, newRecorder(), Hooks{CallTool: forwardAll}); err == nil || !strings.Contains(err.Error(), "neither command nor url") {
		t.Errorf("%v", err)
	}
}

// heldConn is a connection whose request writes wait until it is closed
// and then fail as a closed pipe does: a Close racing a write, every time.
type heldConn struct {
	entered chan struct{}
	done    chan struct{}
	once    sync.Once
	recv    chan transport.Incoming
}

func newHeldConn() *heldConn {
	return &heldConn{entered: make(chan struct{}, 1), done: make(chan struct{}), recv: make(chan transport.Incoming)}
}

func (c *heldConn) Send(_ context.Context, _ []byte, id json.RawMessage) error {
	if id == nil {
		return nil
	}
	c.entered <- struct{}{}
	<-c.done
	return errors.New("write |1: file already closed")
}
func (c *heldConn) Recv() <-chan transport.Incoming { return c.recv }
func (c *heldConn) Done() <-chan struct{}           { return c.done }
func (c *heldConn) Err() error                      { return transport.ErrClosed }
func (c *heldConn) Close() error                    { c.once.Do(func() { close(c.done) }); return nil }
func (c *heldConn) SetProtocolVersion(string)       {}

// TestCloseDuringWrite: a call whose write to the server is cut by the
// session's Close is answered "the session was closed" — what happened —
// not with the write's own error.
func TestCloseDuringWrite(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	conn := newHeldConn()
	s := newSession(tinyConfig("tiny"), rec, Hooks{CallTool: forwardAll}, conn, nil)
	go s.HandleClient(context.Background(), msg(t, callText("1", "hang", "")))
	<-conn.entered
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "was closed") || strings.Contains(m.msg, "file already closed") {
		t.Errorf("answered %s, want the session closed", m.msg)
	}
}

// TestNewSessionNeedsCallTool: a client's session or bridge without a
// CallTool hook is refused before anything is dialled, with an error
// naming the missing hook; a session of the proxy's own that gets a
// client's tools/call anyway refuses it rather than forwarding it.
func TestNewSessionNeedsCallTool(t *testing.T) {
	t.Parallel()
	// The command does not exist: dialling first would fail otherwise.
	cfg := &transport.Config{ID: "x", Command: []string{"/nonexistent/server"}}
	for _, hooks := range []Hooks{{}, {ToolsList: func(r json.RawMessage) json.RawMessage { return r }, ToolsChanged: func(context.Context, *Session) {}}} {
		_, err := NewSession(context.Background(), cfg, newRecorder(), hooks)
		if !errors.Is(err, ErrNoCallTool) || !strings.Contains(err.Error(), "Hooks.CallTool") || !strings.Contains(err.Error(), `server "x"`) {
			t.Errorf("NewSession without CallTool: %v", err)
		}
		_, err = NewBridge(context.Background(), cfg.Stateless(), newRecorder(), hooks, nil)
		if !errors.Is(err, ErrNoCallTool) || !strings.Contains(err.Error(), `server "x"`) {
			t.Errorf("NewBridge without CallTool: %v", err)
		}
	}
	rec := newRecorder()
	own, err := dialSession(context.Background(), tinyConfig("tiny"), rec, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if err := own.Initialize(context.Background(), ClientInfo{Name: "t", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	own.HandleClient(context.Background(), msg(t, callText("1", "echo", `{"text":"undecided"}`)))
	own.HandleClient(context.Background(), msg(t, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"no id"}}}`))
	if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, "no CallTool hook") || strings.Contains(m.msg, "undecided") {
		t.Errorf("own session answered %s", m.msg)
	}
	if rec.has("no id") {
		t.Errorf("an id-less call was forwarded: %v", rec.all())
	}
}

// TestStatelessCancelEndsPost: a request to a 2026-07-28 server is
// cancelled by ending its POST, and its caller is answered at once.
func TestStatelessCancelEndsPost(t *testing.T) {
	t.Parallel()
	hung, closed := make(chan struct{}), make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.ParseMessage(b)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if m.Kind() != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		once.Do(func() { close(hung) })
		<-r.Context().Done()
		close(closed)
	}))
	defer srv.Close()
	url := srv.URL
	s, err := NewSession(context.Background(), (&transport.Config{ID: "m", URL: url, Timeout: 5 * time.Second}).Stateless(), newRecorder(), Hooks{CallTool: forwardAll})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan reply, 1)
	go func() {
		done <- s.roundTrip(ctx, &jsonrpc.Message{Method: "tools/call", Params: ModernMeta(json.RawMessage(`{"name":"hang","arguments":{}}`), ClientInfo{})}, nil, time.Minute, false)
	}()
	<-hung
	cancel()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the request did not end its POST")
	}
	if r := <-done; r.err == nil || !errors.Is(r.err, context.Canceled) {
		t.Errorf("cancelled request answered %+v", r)
	}
}
