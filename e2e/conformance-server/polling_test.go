package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestPolling: a 2025 session's test_reconnection POST gets a priming
// event (id, retry, empty data) and a closed stream; a GET with that
// Last-Event-ID gets the result once; nothing else is taken.
func TestPolling(t *testing.T) {
	t.Parallel()
	p := newPolling()
	body := []byte(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}`)
	req := func(method string, headers map[string]string) *http.Request {
		r := httptest.NewRequest(method, "/mcp", nil)
		for k, v := range headers {
			r.Header.Set(k, v)
		}
		return r
	}
	session := map[string]string{"Mcp-Session-Id": "s1", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
	for name, tc := range map[string]struct {
		headers map[string]string
		body    string
	}{
		"no session":    {map[string]string{"Accept": "text/event-stream"}, string(body)},
		"no SSE accept": {map[string]string{"Mcp-Session-Id": "s1", "Accept": "application/json"}, string(body)},
		"2026 header":   {map[string]string{"Mcp-Session-Id": "s1", "Accept": "text/event-stream", "Mcp-Protocol-Version": "2026-07-28"}, string(body)},
		"another tool":  {session, strings.Replace(string(body), "test_reconnection", "echo", 1)},
		"notification":  {session, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"test_reconnection"}}`},
	} {
		if p.takePost(req(http.MethodPost, tc.headers), []byte(tc.body)) {
			t.Errorf("%s: taken", name)
		}
	}
	if !p.takePost(req(http.MethodPost, session), body) {
		t.Fatal("the 2025 session's test_reconnection call was not taken")
	}
	rec := httptest.NewRecorder()
	p.servePost(rec, body)
	m := regexp.MustCompile(`^id: (\S+)\nretry: \d+\ndata: \n\n$`).FindStringSubmatch(rec.Body.String())
	if m == nil || rec.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("POST stream %q (%s), want one priming event", rec.Body.String(), rec.Header().Get("Content-Type"))
	}
	if p.serveGet(httptest.NewRecorder(), req(http.MethodGet, map[string]string{"Last-Event-ID": "poll-unknown"})) {
		t.Error("an unknown Last-Event-ID was served")
	}
	if p.serveGet(httptest.NewRecorder(), req(http.MethodGet, nil)) {
		t.Error("a GET without Last-Event-ID was served")
	}
	rec = httptest.NewRecorder()
	if !p.serveGet(rec, req(http.MethodGet, map[string]string{"Last-Event-ID": m[1]})) {
		t.Fatal("the reconnection was not served")
	}
	if got := rec.Body.String(); !strings.Contains(got, `"id":41`) || !strings.Contains(got, reconnectionText) {
		t.Errorf("reconnection stream %q, want the call's result", got)
	}
	if p.serveGet(httptest.NewRecorder(), req(http.MethodGet, map[string]string{"Last-Event-ID": m[1]})) {
		t.Error("the result was served twice")
	}
}

// TestPollingBounded: results owed to clients that never reconnect are
// capped.
func TestPollingBounded(t *testing.T) {
	t.Parallel()
	p := newPolling()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_reconnection"}}`)
	for range maxPendingPolls * 3 {
		p.servePost(httptest.NewRecorder(), body)
	}
	if n := len(p.pending); n > maxPendingPolls {
		t.Errorf("%d results held, cap %d", n, maxPendingPolls)
	}
}
