package mcpserve

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// TestEndpointMethods: only POST, GET and DELETE exist; a 2026-07-28
// request (or an endpoint with no session era) has no GET stream and no
// session to delete.
func TestEndpointMethods(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	modernOnly := httptest.NewServer(NewEndpoint(Options{Modern: &fakeHandler{}}))
	defer modernOnly.Close()
	cases := []struct {
		name, url, method string
		headers           []string
		status            int
		allow             string
	}{
		{"put", te.url, http.MethodPut, nil, http.StatusMethodNotAllowed, "GET, POST, DELETE"},
		{"modern get", te.url, http.MethodGet, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern}, http.StatusMethodNotAllowed, "POST"},
		{"modern delete", te.url, http.MethodDelete, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern}, http.StatusMethodNotAllowed, "POST"},
		{"get, no session era", modernOnly.URL, http.MethodGet, nil, http.StatusMethodNotAllowed, "POST"},
		{"delete, no session era", modernOnly.URL, http.MethodDelete, nil, http.StatusMethodNotAllowed, "POST"},
		{"get without accept", te.url, http.MethodGet, []string{"Accept", "application/json"}, http.StatusNotAcceptable, ""},
		{"get without session", te.url, http.MethodGet, []string{"Accept", "text/event-stream"}, http.StatusBadRequest, ""},
		{"delete unknown session", te.url, http.MethodDelete, []string{"Mcp-Session-Id", "nope"}, http.StatusNotFound, ""},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(c.method, c.url, nil)
		for i := 0; i+1 < len(c.headers); i += 2 {
			req.Header.Set(c.headers[i], c.headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != c.status || (c.allow != "" && resp.Header.Get("Allow") != c.allow) {
			t.Errorf("%s: %s Allow %q (%s), want %d Allow %q", c.name, resp.Status, resp.Header.Get("Allow"), body, c.status, c.allow)
		}
	}
}

// TestPostRefusals: an oversized, unparseable or batched body is refused
// before any session sees it.
func TestPostRefusals(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	modernOnly := httptest.NewServer(NewEndpoint(Options{Modern: &fakeHandler{}}))
	defer modernOnly.Close()
	cases := []struct {
		name, url, body string
		status, code    int
	}{
		{"too large", te.url, `{"jsonrpc":"2.0","id":1,"method":"x","params":{"p":"` + strings.Repeat("a", maxClientMessage) + `"}}`, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest},
		{"not json", te.url, `{"jsonrpc":`, http.StatusBadRequest, jsonrpc.CodeParseError},
		{"batch", te.url, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, http.StatusBadRequest, jsonrpc.CodeParseError},
		{"duplicate key", te.url, `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`, http.StatusBadRequest, jsonrpc.CodeParseError},
		{"response to a stateless endpoint", modernOnly.URL, `{"jsonrpc":"2.0","id":1,"result":{}}`, http.StatusBadRequest, jsonrpc.CodeInvalidRequest},
	}
	for _, c := range cases {
		resp := post(t, context.Background(), c.url, c.body)
		body := readAll(t, resp)
		if resp.StatusCode != c.status || !strings.Contains(body, `"code":`+itoa(c.code)) {
			t.Errorf("%s: %s %.200s, want %d with code %d", c.name, resp.Status, body, c.status, c.code)
		}
	}
	if n := te.e.Sessions(); n != 0 {
		t.Errorf("%d sessions opened by refused bodies", n)
	}
}

func itoa(n int) string { return string(jsonrpc.IntID(int64(n))) }

func TestAccepts(t *testing.T) {
	t.Parallel()
	cases := []struct {
		accept []string
		media  string
		want   bool
	}{
		{[]string{"application/json, text/event-stream"}, "text/event-stream", true},
		{[]string{"application/json"}, "text/event-stream", false},
		{[]string{"*/*"}, "text/event-stream", true},
		{[]string{"text/html", "text/event-stream"}, "text/event-stream", true},
		{nil, "application/json", false},
	}
	for _, c := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, a := range c.accept {
			r.Header.Add("Accept", a)
		}
		if got := accepts(r, c.media); got != c.want {
			t.Errorf("accepts(%q, %s) = %v", c.accept, c.media, got)
		}
	}
}

// TestWriteEventSplitsLines: a message holding line breaks (a server's
// pretty-printed JSON) becomes several data lines, which the client joins
// back, instead of breaking the stream's framing.
func TestWriteEventSplitsLines(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	writeEvent(&b, []byte("{\r\n \"a\": 1,\n \"b\": [2]\n}"))
	want := "event: message\ndata: {\ndata:  \"a\": 1,\ndata:  \"b\": [2]\ndata: }\n\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
	ev, _ := newSSEReader(&b).next()
	if ev.data != "{\n \"a\": 1,\n \"b\": [2]\n}" {
		t.Errorf("read back %q", ev.data)
	}
}

// TestEndpointClose ends every session.
func TestEndpointClose(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	initialize(t, te.url, "2025-11-25")
	initialize(t, te.url, "2025-06-18")
	if n := te.e.Sessions(); n != 2 {
		t.Fatalf("%d sessions", n)
	}
	te.e.Close()
	if n := te.e.Sessions(); n != 0 {
		t.Errorf("%d sessions after Close", n)
	}
	for i := range 2 {
		s := te.session(i)
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if !closed {
			t.Errorf("session %d not closed", i)
		}
	}
	// A session started as the endpoint closes is refused.
	resp := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize after Close: %s %s", resp.Status, body)
	}
}
