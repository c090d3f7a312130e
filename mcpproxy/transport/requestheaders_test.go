package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestRequestHeadersHook: the hook sees each message sent over streamable
// HTTP and what it sets reaches the server, after the configured headers
// (so it can add, but a test also sees it runs last).
func TestRequestHeadersHook(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	defer srv.Close()
	var seen []string
	cfg := &Config{ID: "s", URL: srv.URL, Headers: map[string]string{"X-Static": "v"},
		RequestHeaders: func(_ context.Context, msg []byte, h http.Header) {
			seen = append(seen, string(msg))
			h.Set("Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			h.Set("X-Static", "hook")
		}}
	c := dialStreamable(cfg.Stateless())
	defer c.Close()
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`)
	if err := c.Send(context.Background(), msg, json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.Recv():
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0].Get("Traceparent") == "" || got[0].Get("X-Static") != "hook" {
		t.Fatalf("server saw %v", got)
	}
	if len(seen) != 1 || seen[0] != string(msg) {
		t.Fatalf("hook saw %q", seen)
	}
}
