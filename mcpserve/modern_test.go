package mcpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// fakeHandler stands in for the gateway's stateless handler (which lives
// in a package importing this one): it answers as a test scripts it.
type fakeHandler struct {
	serve func(ctx context.Context, m *jsonrpc.Message, req Request, out mcpwire.Peer)

	mu       sync.Mutex
	served   []string
	notified []string
	headers  []string
}

func (h *fakeHandler) Serve(ctx context.Context, m *jsonrpc.Message, req Request, out mcpwire.Peer) {
	h.mu.Lock()
	h.served = append(h.served, m.Method)
	if req.Header != nil {
		h.headers = append(h.headers, req.Header(mcpwire.HeaderMethod))
	}
	h.mu.Unlock()
	if h.serve != nil {
		h.serve(ctx, m, req, out)
		return
	}
	out.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"resultType":"complete"}`)}).Encode(), m.ID, false)
}

func (h *fakeHandler) Notify(_ context.Context, m *jsonrpc.Message, _ Request) {
	h.mu.Lock()
	h.notified = append(h.notified, m.Method)
	h.mu.Unlock()
}

const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func modernBody(method, params string) string {
	if params != "" {
		params += ","
	}
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + meta + `}}`
}

// TestModernValidation: every header or _meta mismatch of a stateless
// request is refused before the handler runs — -32020 for headers that
// disagree with the body, -32602 for missing _meta, -32022 for an
// unknown version — and the decision is always taken on the body.
func TestModernValidation(t *testing.T) {
	t.Parallel()
	h := &fakeHandler{}
	srv := httptest.NewServer(NewEndpoint(Options{Modern: h, Legacy: func(context.Context, mcpwire.Peer) (Session, error) { return &scripted{}, nil }}))
	defer srv.Close()
	call := modernBody("tools/call", `"name":"echo","arguments":{}`)
	ok := []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "echo"}
	cases := []struct {
		name    string
		body    string
		headers []string
		code    int
	}{
		{"last-event-id", call, append(ok, mcpwire.HeaderLastEventID, "1:1"), jsonrpc.CodeHeaderMismatch},
		{"no version header", call, []string{mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "echo"}, jsonrpc.CodeHeaderMismatch},
		{"version header differs", call, []string{mcpwire.HeaderProtocolVersion, "2099-01-01", mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "echo"}, jsonrpc.CodeHeaderMismatch},
		{"no Mcp-Method", call, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderName, "echo"}, jsonrpc.CodeHeaderMismatch},
		{"Mcp-Method differs", call, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list", mcpwire.HeaderName, "echo"}, jsonrpc.CodeHeaderMismatch},
		{"no Mcp-Name", call, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call"}, jsonrpc.CodeHeaderMismatch},
		{"Mcp-Name differs", call, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "delete_all"}, jsonrpc.CodeHeaderMismatch},
		{"Mcp-Name case variant", call, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "Echo"}, jsonrpc.CodeHeaderMismatch},
		{"Mcp-Name bad base64", call, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, "=?base64?!!!?="}, jsonrpc.CodeHeaderMismatch},
		{"uri differs", modernBody("resources/read", `"uri":"file:///a"`), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "resources/read", mcpwire.HeaderName, "file:///b"}, jsonrpc.CodeHeaderMismatch},
		{"prompt name differs", modernBody("prompts/get", `"name":"p"`), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "prompts/get", mcpwire.HeaderName, "q"}, jsonrpc.CodeHeaderMismatch},
		{"taskId differs", modernBody("tasks/get", `"taskId":"t1"`), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tasks/get", mcpwire.HeaderName, "t2"}, jsonrpc.CodeHeaderMismatch},
		{"no _meta version", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list"}, jsonrpc.CodeInvalidParams},
		{"no capabilities", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list"}, jsonrpc.CodeInvalidParams},
		{"capabilities not an object", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}}`, []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list"}, jsonrpc.CodeInvalidParams},
		{"unknown version", strings.Replace(modernBody("tools/list", ""), mcpwire.Modern, "2099-01-01", 1), []string{mcpwire.HeaderProtocolVersion, "2099-01-01", mcpwire.HeaderMethod, "tools/list"}, mcp.UNSUPPORTED_PROTOCOL_VERSION},
	}
	for _, c := range cases {
		resp := post(t, context.Background(), srv.URL, c.body, c.headers...)
		body := readAll(t, resp)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"code":`+itoa(c.code)) {
			t.Errorf("%s: %s %s, want 400 with code %d", c.name, resp.Status, body, c.code)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.served) != 0 {
		t.Errorf("the handler served %q", h.served)
	}
}

// TestModernServes: a valid request reaches the handler with its
// headers; optional Mcp-Name may be absent for the tasks methods; the
// base64 form of Mcp-Name is decoded.
func TestModernServes(t *testing.T) {
	t.Parallel()
	h := &fakeHandler{}
	srv := httptest.NewServer(NewEndpoint(Options{Modern: h}))
	defer srv.Close()
	cases := []struct {
		body    string
		headers []string
	}{
		{modernBody("tools/list", ""), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list"}},
		{modernBody("tasks/get", `"taskId":"t1"`), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tasks/get"}},
		{modernBody("tools/call", `"name":"échő","arguments":{}`), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/call", mcpwire.HeaderName, encoded("échő")}},
		{modernBody("server/discover", ""), []string{mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "server/discover"}},
	}
	for _, c := range cases {
		resp := post(t, context.Background(), srv.URL, c.body, c.headers...)
		if body := readAll(t, resp); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"resultType":"complete"`) {
			t.Errorf("%s: %s %s", c.body, resp.Status, body)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.headers) != len(cases) || h.headers[0] != "tools/list" {
		t.Errorf("handler saw headers %q", h.headers)
	}
}

// TestModernRemovedMethods: methods 2026-07-28 removed are 404 -32601.
func TestModernRemovedMethods(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(NewEndpoint(Options{Modern: &fakeHandler{}}))
	defer srv.Close()
	for _, method := range []string{"initialize", "ping", "logging/setLevel", "resources/subscribe", "tasks/list", "tasks/result"} {
		resp := post(t, context.Background(), srv.URL, modernBody(method, ""), mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, method)
		if body := readAll(t, resp); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, "-32601") {
			t.Errorf("%s: %s %s", method, resp.Status, body)
		}
	}
}

// TestModernNotifications: a notification is 202 and reaches Notify; a
// request without an id is 400, though Notify sees it (to audit it).
func TestModernNotifications(t *testing.T) {
	t.Parallel()
	h := &fakeHandler{}
	srv := httptest.NewServer(NewEndpoint(Options{Modern: h}))
	defer srv.Close()
	note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{` + meta + `}}`
	resp := post(t, context.Background(), srv.URL, note, mcpwire.HeaderProtocolVersion, mcpwire.Modern)
	if readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Errorf("notification: %s", resp.Status)
	}
	noID := `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x",` + meta + `}}`
	resp = post(t, context.Background(), srv.URL, noID, mcpwire.HeaderProtocolVersion, mcpwire.Modern)
	if body := readAll(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "must be sent as a request") {
		t.Errorf("id-less call: %s %s", resp.Status, body)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.notified) != 2 || len(h.served) != 0 {
		t.Errorf("notified %q served %q", h.notified, h.served)
	}
}

// TestModernWithoutHandler: an endpoint that serves no stateless era
// answers a 2026-07-28 request with UnsupportedProtocolVersion.
func TestModernWithoutHandler(t *testing.T) {
	t.Parallel()
	te := newTestEndpoint(t, Options{}, nil)
	resp := post(t, context.Background(), te.url, modernBody("tools/list", ""), mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list")
	if body := readAll(t, resp); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"supported":["2026-07-28","2025-11-25"`) {
		t.Errorf("%s %s", resp.Status, body)
	}
}

// TestDirectWriter: a stateless answer that comes alone is plain JSON
// with the status its error calls for; a notification first, or the
// downstream's stream (Streamed), makes it an SSE stream; a client that
// takes no stream loses the notifications, not the answer.
func TestDirectWriter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		accept string
		serve  func(ctx context.Context, m *jsonrpc.Message, out mcpwire.Peer)
		status int
		ct     string
		want   []string
	}{
		{"json", "application/json, text/event-stream", func(_ context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			out.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"a":1}`)}).Encode(), m.ID, false)
		}, 200, "application/json", []string{`"a":1`}},
		{"not found", "application/json", func(_ context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			out.Send(jsonrpc.ErrorResponse(m.ID, jsonrpc.CodeMethodNotFound, "no"), m.ID, false)
		}, 404, "application/json", []string{"-32601"}},
		{"invalid params", "application/json", func(_ context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			out.Send(jsonrpc.ErrorResponse(m.ID, jsonrpc.CodeInvalidParams, "bad"), m.ID, false)
		}, 400, "application/json", []string{"-32602"}},
		{"tool failure is 200", "application/json", func(_ context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			out.Send(jsonrpc.ErrorResponse(m.ID, jsonrpc.CodeUnavailable, "down"), m.ID, false)
		}, 200, "application/json", []string{"-32000"}},
		{"progress first", "application/json, text/event-stream", func(_ context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			out.Send(progress(1), m.ID, true)
			out.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{}`)}).Encode(), m.ID, false)
			out.Send(progress(2), m.ID, true) // after the answer: dropped
		}, 200, "text/event-stream", []string{"progress", `"result":{}`}},
		{"streamed", "application/json, text/event-stream", func(ctx context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			mcpwire.StreamHintsFrom(ctx).Streamed()
			mcpwire.StreamHintsFrom(ctx).Paused(0) // not resumable in 2026-07-28: nothing happens
			out.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{}`)}).Encode(), m.ID, false)
		}, 200, "text/event-stream", []string{`"result":{}`}},
		{"no stream accepted", "application/json", func(ctx context.Context, m *jsonrpc.Message, out mcpwire.Peer) {
			mcpwire.StreamHintsFrom(ctx).Streamed()
			out.Send(progress(1), m.ID, true)
			out.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"b":2}`)}).Encode(), m.ID, false)
		}, 200, "application/json", []string{`"b":2`}},
	}
	for _, c := range cases {
		serve := c.serve
		h := &fakeHandler{serve: func(ctx context.Context, m *jsonrpc.Message, _ Request, out mcpwire.Peer) { serve(ctx, m, out) }}
		srv := httptest.NewServer(NewEndpoint(Options{Modern: h}))
		resp := post(t, context.Background(), srv.URL, modernBody("tools/list", ""), mcpwire.HeaderProtocolVersion, mcpwire.Modern, mcpwire.HeaderMethod, "tools/list", "Accept", c.accept)
		body := readAll(t, resp)
		srv.Close()
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != c.ct {
			t.Errorf("%s: %s %s", c.name, resp.Status, resp.Header.Get("Content-Type"))
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: body %q lacks %q", c.name, body, w)
			}
		}
		if strings.Contains(body, `"progress":2`) {
			t.Errorf("%s: a notification after the answer was written", c.name)
		}
	}
}

func encoded(s string) string {
	v, _ := mcp.EncodeHeaderValue(s)
	return v
}
