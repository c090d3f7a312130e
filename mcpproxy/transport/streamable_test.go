package transport

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
)

// TestStreamableSession: a session with an mcp-go server over streamable
// HTTP: its session id is kept and sent, closing sends DELETE.
func TestStreamableSession(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	var deletes, withSession atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") != "":
			deletes.Add(1)
		case r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" && r.Header.Get("Mcp-Protocol-Version") == "2025-11-25":
			withSession.Add(1)
		}
		proxyTo(t, url, w, r)
	}))
	defer front.Close()
	c := dial(t, &Config{ID: "go", URL: front.URL, Timeout: 10 * time.Second})
	initialize(t, c)
	if in := request(t, context.Background(), c, "2", "tools/call", callParams("echo", `{"text":"over http"}`), nil); !strings.Contains(string(in.Msg), "over http") || string(in.Via) != "2" {
		t.Errorf("answer %s via %s", in.Msg, in.Via)
	}
	c.Close()
	if deletes.Load() != 1 || withSession.Load() < 2 {
		t.Errorf("%d DELETEs on close, %d POSTs with the session's id and version", deletes.Load(), withSession.Load())
	}
}

// proxyTo forwards one request to url (a front that sees what crosses).
func proxyTo(t *testing.T, url string, w http.ResponseWriter, r *http.Request) {
	req, _ := http.NewRequestWithContext(r.Context(), r.Method, url, r.Body)
	req.Header = r.Header.Clone()
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	f, _ := w.(http.Flusher)
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
			if f != nil {
				f.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// TestStreamableFailures: what a misbehaving HTTP server answers becomes
// an error answer naming it; a 404 on the session ends the connection.
func TestStreamableFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)
		want string
		ends bool
	}{
		{"500", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "answered HTTP 500 Internal Server Error: boom", false},
		{"content type", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>hi</p>"))
		}, `answered with content type`, false},
		{"oversized json", func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"x":"` + strings.Repeat("a", 5000) + `"}}`))
		}, "answer larger than 1024 bytes", false},
		{"stream without answer", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"))
		}, "closed the response stream without answering", false},
		{"oversized event", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: " + strings.Repeat("b", 5000) + "\n\n"))
		}, "event larger than 1024 bytes", false},
		{"session lost", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			http.Error(w, "no session", http.StatusNotFound)
		}, "ended the session (HTTP 404)", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			conn := dial(t, &Config{ID: "bad", URL: servertest.ScriptedHTTP(t, c.h), MaxMessage: 1024, Timeout: 5 * time.Second})
			initialize(t, conn)
			in := request(t, context.Background(), conn, "1", "tools/call", callParams("x", ""), nil)
			if e := jsonrpc.ParseError(jsonrpc.Field(in.Msg, "error")); e.Code != jsonrpc.CodeUnavailable || !strings.Contains(e.Message, c.want) || !strings.Contains(e.Message, `server "bad"`) {
				t.Errorf("answer %s, want %q naming the server", in.Msg, c.want)
			}
			if c.ends {
				select {
				case <-conn.Done():
					if err := conn.Err(); err == nil || !strings.Contains(err.Error(), c.want) {
						t.Errorf("ended with %v", err)
					}
				case <-time.After(10 * time.Second):
					t.Error("a lost session did not end the connection")
				}
			}
		})
	}
}

// TestStreamableBatch: a JSON array answer is taken message by message.
func TestStreamableBatch(t *testing.T) {
	t.Parallel()
	url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"first"}},{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"batched":true}}]`))
	})
	c := dial(t, &Config{ID: "b", URL: url, Timeout: 5 * time.Second})
	initialize(t, c)
	var seen []Incoming
	if in := request(t, context.Background(), c, "1", "tools/call", callParams("x", ""), &seen); !strings.Contains(string(in.Msg), `"batched":true`) {
		t.Errorf("answer %s", in.Msg)
	}
	if len(seen) != 1 || !strings.Contains(string(seen[0].Msg), `"data":"first"`) || string(seen[0].Via) != "1" {
		t.Errorf("before the answer: %+v", seen)
	}
}

// TestStatelessPost: a 2026-07-28 server gets no session id, the standard
// headers on every request (configured ones too), and a 4xx carrying a
// JSON-RPC error is the answer; ending the request ends its POST.
func TestStatelessPost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []http.Header
	closed := make(chan struct{})
	url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if m.Method == "tools/call" && strings.Contains(string(m.Params), `"hang"`) {
			<-r.Context().Done()
			close(closed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(jsonrpc.ErrorResponse(m.ID, jsonrpc.CodeHeaderMismatch, "Header mismatch"))
	})
	cfg := (&Config{ID: "m", URL: url, Timeout: 5 * time.Second, Headers: map[string]string{"X-Key": "k"},
		ParamHeaders: func(tool string, _ []byte) map[string]string { return map[string]string{"Mcp-Param-Region": "eu"} }}).Stateless()
	c := dial(t, cfg)
	if cc, ok := c.(interface{ CancelsByClosing() bool }); !ok || !cc.CancelsByClosing() {
		t.Error("a stateless connection does not cancel by closing the POST")
	}
	if in := request(t, context.Background(), c, "1", "tools/call", modernParams("echo"), nil); !strings.Contains(string(in.Msg), "-32020") {
		t.Fatalf("4xx answer: %s", in.Msg)
	}
	mu.Lock()
	h := seen[0]
	mu.Unlock()
	if h.Get("Mcp-Session-Id") != "" || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "echo" || h.Get("MCP-Protocol-Version") != "2026-07-28" || h.Get("X-Key") != "k" || h.Get("Mcp-Param-Region") != "eu" {
		t.Errorf("headers %v", h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	send(t, ctx, c, "2", "tools/call", modernParams("hang"))
	servertest.WaitFor(t, "the hanging POST", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 2 })
	cancel()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the request did not end its POST")
	}
}

// TestGetStreamResumes: the session's GET stream opens once the client
// said initialized and someone listens (not before: an idle session holds
// no stream), and is reopened with Last-Event-ID; a server refusing
// that id is asked again without it; a server without a GET stream (405)
// is left alone.
func TestGetStreamResumes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lastIDs []string
	url := servertest.ScriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, _ *jsonrpc.Message) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		switch n {
		case 1:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: g1\nretry: 10\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"))
		case 2:
			http.Error(w, "unknown event", http.StatusBadRequest)
		default:
			http.Error(w, "no GET", http.StatusMethodNotAllowed)
		}
	})
	c := dial(t, &Config{ID: "g", URL: url, Timeout: 5 * time.Second})
	initialize(t, c)
	if getStarted(c) {
		t.Fatal("the GET stream opened before anyone listened")
	}
	mu.Lock()
	early := len(lastIDs)
	mu.Unlock()
	if early != 0 {
		t.Fatalf("%d GETs before anyone listened", early)
	}
	Listen(c)
	Listen(c) // a second listener opens no second stream
	select {
	case in := <-c.Recv():
		if !strings.Contains(string(in.Msg), "list_changed") || in.Via != nil {
			t.Errorf("GET stream gave %s via %s", in.Msg, in.Via)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing on the GET stream")
	}
	servertest.WaitFor(t, "three GETs", func() bool { mu.Lock(); defer mu.Unlock(); return len(lastIDs) >= 3 })
	mu.Lock()
	defer mu.Unlock()
	if lastIDs[0] != "" || lastIDs[1] != "g1" || lastIDs[2] != "" {
		t.Errorf("Last-Event-ID per GET %q", lastIDs)
	}
}

// TestListenBeforeInitialized: a listener that comes first gets the GET
// stream once the handshake is done, and a closed connection opens none.
func TestListenBeforeInitialized(t *testing.T) {
	t.Parallel()
	gets := make(chan struct{}, 4)
	url := servertest.ScriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, _ *jsonrpc.Message) {
		if r.Method == http.MethodGet {
			gets <- struct{}{}
			http.Error(w, "no GET", http.StatusMethodNotAllowed)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	c := dial(t, &Config{ID: "g", URL: url, Timeout: 5 * time.Second})
	Listen(c)
	if getStarted(c) {
		t.Fatal("the GET stream opened before the handshake")
	}
	initialize(t, c)
	select {
	case <-gets:
	case <-time.After(10 * time.Second):
		t.Fatal("no GET once initialized")
	}
	closed := dial(t, &Config{ID: "g", URL: url, Timeout: 5 * time.Second})
	initialize(t, closed)
	closed.Close()
	Listen(closed)
	if getStarted(closed) {
		t.Error("a closed connection opened its GET stream")
	}
}

// getStarted reports whether c started its GET stream.
func getStarted(c Conn) bool {
	sc := c.(*streamConn)
	sc.getMu.Lock()
	defer sc.getMu.Unlock()
	return sc.getStarted
}

// TestNotificationPostBounded: a notification POST the server never
// answers is cut by its context.
func TestNotificationPostBounded(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		<-r.Context().Done()
	}))
	defer srv.Close()
	c := dialStreamable(&Config{ID: "n", URL: srv.URL})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/x"}`), nil); err == nil {
		t.Error("a stuck notification POST returned no error")
	}
	c.Close()
	if err := c.Send(context.Background(), []byte(`{}`), nil); err != ErrClosed {
		t.Errorf("send after close: %v", err)
	}
}

// TestStreamVia: what comes on a call's SSE stream is marked as carried
// by that call (its progress, the server's requests), and a notification
// written just after the answer still arrives before it.
func TestStreamVia(t *testing.T) {
	t.Parallel()
	url := servertest.StreamedAnswer(t)
	c := dial(t, &Config{ID: "r", URL: url, Timeout: 5 * time.Second})
	initialize(t, c)
	var seen []Incoming
	in := request(t, context.Background(), c, `"c"`, "tools/call", callParams("x", ""), &seen)
	if string(in.Via) != `"c"` {
		t.Errorf("answer via %s", in.Via)
	}
	if len(seen) != 3 || !strings.Contains(string(seen[2].Msg), `"after"`) {
		t.Fatalf("before the answer: %+v", seen)
	}
	for _, s := range seen {
		if string(s.Via) != `"c"` {
			t.Errorf("%s via %s", s.Msg, s.Via)
		}
	}
}
