package mcpproxy

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
)

// TestStreamableSession: a session with an mcp-go server over streamable
// HTTP: its session id is kept and sent, closing sends DELETE.
func TestStreamableSession(t *testing.T) {
	t.Parallel()
	_, url := goServer(t)
	var deletes atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") != "" {
			deletes.Add(1)
		}
		proxyTo(t, url, w, r)
	}))
	defer front.Close()
	rec := newRecorder()
	s := startSession(t, &Config{ID: "go", URL: front.URL, Timeout: 10 * time.Second}, rec, Hooks{})
	s.HandleClient(context.Background(), msg(t, callText("2", "echo", `{"text":"over http"}`)))
	rec.wait(t, "over http")
	s.Close()
	if deletes.Load() != 1 {
		t.Errorf("%d DELETEs on close", deletes.Load())
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

// scriptedHTTP is a downstream whose answers a test writes by hand, for
// what no well-behaved server does.
func scriptedHTTP(t *testing.T, h func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)) string {
	t.Helper()
	return scriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		h(w, r, m)
	})
}

// scriptedHTTPAll is scriptedHTTP whose handler also gets GET and DELETE.
func scriptedHTTPAll(t *testing.T, h func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m *jsonrpc.Message
		if r.Method == http.MethodPost {
			b, _ := io.ReadAll(r.Body)
			m, _ = jsonrpc.ParseMessage(b)
		}
		if m != nil && m.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "sess-1")
			w.Header().Set("Content-Type", "application/json")
			w.Write((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`)}).Encode())
			return
		}
		if m != nil && m.Kind() != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h(w, r, m)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestStreamableFailures: what a misbehaving HTTP server answers becomes
// an error answer naming it; a 404 on the session ends the connection.
func TestStreamableFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message)
		want string
	}{
		{"500", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			http.Error(w, "boom", http.StatusInternalServerError)
		}, "answered HTTP 500 Internal Server Error: boom"},
		{"content type", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<p>hi</p>"))
		}, `answered with content type`},
		{"oversized json", func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"x":"` + strings.Repeat("a", 5000) + `"}}`))
		}, "answer larger than 1024 bytes"},
		{"stream without answer", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"))
		}, "closed the response stream without answering"},
		{"oversized event", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("data: " + strings.Repeat("b", 5000) + "\n\n"))
		}, "event larger than 1024 bytes"},
		{"session lost", func(w http.ResponseWriter, _ *http.Request, _ *jsonrpc.Message) {
			http.Error(w, "no session", http.StatusNotFound)
		}, "ended the session (HTTP 404)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			s := startSession(t, &Config{ID: "bad", URL: scriptedHTTP(t, c.h), MaxMessage: 1024, Timeout: 5 * time.Second}, rec, Hooks{})
			s.HandleClient(context.Background(), msg(t, callText("1", "x", "")))
			if m := rec.wait(t, `"id":1`); !strings.Contains(m.msg, c.want) {
				t.Errorf("answer %s, want %q", m.msg, c.want)
			}
		})
	}
}

// TestStreamableBatch: a JSON array answer is taken message by message.
func TestStreamableBatch(t *testing.T) {
	t.Parallel()
	url := scriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"first"}},{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"batched":true}}]`))
	})
	rec := newRecorder()
	s := startSession(t, &Config{ID: "b", URL: url, Timeout: 5 * time.Second}, rec, Hooks{})
	s.HandleClient(context.Background(), msg(t, callText("1", "x", "")))
	rec.wait(t, `"batched":true`)
	rec.wait(t, `"data":"first"`)
}

// TestStatelessPost: a 2026-07-28 server gets no session id, the standard
// headers on every request, and a 4xx carrying a JSON-RPC error is the
// answer; ending the request ends its POST.
func TestStatelessPost(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []http.Header
	closed := make(chan struct{})
	url := scriptedHTTP(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		if m.Method == "tools/call" && toolName(m.Params) == "hang" {
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
	s, err := NewSession(context.Background(), cfg, newRecorder(), Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	params := ModernMeta(json.RawMessage(`{"name":"echo","arguments":{}}`), ClientInfo{Name: "toolgate", Version: "1"})
	r := s.roundTrip(context.Background(), &jsonrpc.Message{Method: "tools/call", Params: params}, nil, time.Second, false)
	if r.err != nil || !strings.Contains(string(r.rpcErr), "-32020") {
		t.Fatalf("4xx answer: %+v", r)
	}
	mu.Lock()
	h := seen[0]
	mu.Unlock()
	if h.Get("Mcp-Session-Id") != "" || h.Get("Mcp-Method") != "tools/call" || h.Get("Mcp-Name") != "echo" || h.Get("MCP-Protocol-Version") != "2026-07-28" || h.Get("X-Key") != "k" || h.Get("Mcp-Param-Region") != "eu" {
		t.Errorf("headers %v", h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hang := ModernMeta(json.RawMessage(`{"name":"hang","arguments":{}}`), ClientInfo{Name: "toolgate", Version: "1"})
	done := make(chan reply, 1)
	go func() {
		done <- s.roundTrip(ctx, &jsonrpc.Message{Method: "tools/call", Params: hang}, nil, time.Minute, false)
	}()
	waitFor(t, "the hanging POST", func() bool { mu.Lock(); defer mu.Unlock(); return len(seen) == 2 })
	cancel()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling the request did not end its POST")
	}
	if r := <-done; r.err == nil {
		t.Error("cancelled request answered")
	}
}

// TestGetStreamResumes: the session's GET stream is reopened with
// Last-Event-ID; a server refusing that id is asked again without it; a
// server without a GET stream (405) is left alone.
func TestGetStreamResumes(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lastIDs []string
	url := scriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, _ *jsonrpc.Message) {
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
	rec := newRecorder()
	startSession(t, &Config{ID: "g", URL: url, Timeout: 5 * time.Second}, rec, Hooks{})
	rec.wait(t, "list_changed")
	waitFor(t, "three GETs", func() bool { mu.Lock(); defer mu.Unlock(); return len(lastIDs) >= 3 })
	mu.Lock()
	defer mu.Unlock()
	if lastIDs[0] != "" || lastIDs[1] != "g1" || lastIDs[2] != "" {
		t.Errorf("Last-Event-ID per GET %q", lastIDs)
	}
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

// TestStreamRouting: what comes on a call's SSE stream belongs to that
// call: its progress and the server's requests are routed to it, and a
// notification written just after the answer still reaches the client
// first.
func TestStreamRouting(t *testing.T) {
	t.Parallel()
	url := scriptedHTTP(t, func(w http.ResponseWriter, _ *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte(": comment\n\nid: 1\ndata: \n\n"))
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"x\",\"progress\":1}}\n\n"))
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n"))
		w.Write([]byte("data: " + string((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"done":1}`)}).Encode()) + "\n\n"))
		w.(http.Flusher).Flush()
		w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"after\"}}\n\n"))
	})
	rec := newRecorder()
	s := startSession(t, &Config{ID: "r", URL: url, Timeout: 5 * time.Second}, rec, Hooks{})
	s.HandleClient(context.Background(), msg(t, callText(`"c"`, "x", "")))
	rec.wait(t, `"done":1`)
	var order []string
	for _, m := range rec.all()[1:] {
		order = append(order, m.route)
		if strings.Contains(m.msg, `"done":1`) {
			break
		}
	}
	if len(order) != 4 || order[0] != `"c"` || order[1] != `"c"` || order[2] != `"c"` {
		t.Errorf("routes %q in %v", order, rec.all())
	}
	if all := rec.all(); !strings.Contains(all[len(all)-1].msg, `"done":1`) {
		t.Errorf("the answer came before the notification written after it: %v", all)
	}
}
