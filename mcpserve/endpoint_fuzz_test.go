package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// The fuzz targets of the client-facing transports: whatever a client
// sends (body and MCP headers over HTTP; lines on stdio), the transport
// never panics or hangs, answers with a known status and valid JSON-RPC,
// hands a Session or Handler exactly the message it parsed, serves a
// 2026-07-28 request only when its headers and _meta agree with its body
// (decisions are taken on the body), never gives a 2026-07-28 message to a
// session, and tells Refused of every tools/call attempt it refuses
// itself. The Session and Handler here are stand-ins that answer at once:
// the transport is what is under test.

// seen records what reached the stand-ins.
type seen struct {
	mu       sync.Mutex
	legacy   []*jsonrpc.Message
	served   []servedReq
	notified []*jsonrpc.Message
	refused  int
}

type servedReq struct {
	m   *jsonrpc.Message
	req Request
}

func (s *seen) add(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
}

// standInSession answers every request at once with an empty result.
type standInSession struct {
	s    *seen
	peer mcpwire.Peer
}

func (ss *standInSession) HandleClient(_ context.Context, m *jsonrpc.Message) {
	ss.s.add(func() { ss.s.legacy = append(ss.s.legacy, m) })
	if m.Kind() == jsonrpc.KindRequest {
		ss.peer.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{}`)}).Encode(), m.ID, false)
	}
}

func (ss *standInSession) Close() error { return nil }

// standInHandler answers every stateless request at once.
type standInHandler struct{ s *seen }

func (h standInHandler) Serve(_ context.Context, m *jsonrpc.Message, req Request, out mcpwire.Peer) {
	h.s.add(func() { h.s.served = append(h.s.served, servedReq{m, req}) })
	out.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(`{"resultType":"complete"}`)}).Encode(), m.ID, false)
}

func (h standInHandler) Notify(_ context.Context, m *jsonrpc.Message, _ Request) {
	h.s.add(func() { h.s.notified = append(h.s.notified, m) })
}

func standInOptions(s *seen) Options {
	return Options{
		Legacy: func(_ context.Context, peer mcpwire.Peer) (Session, error) {
			return &standInSession{s: s, peer: peer}, nil
		},
		Modern:      standInHandler{s},
		MaxSessions: 4,
		Refused:     func(context.Context, error) { s.add(func() { s.refused++ }) },
	}
}

const fuzzInit = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`

// serve runs one request through e with a bound, failing on a hang.
func serve(t *testing.T, e *Endpoint, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.ServeHTTP(rec, req.WithContext(ctx))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("the endpoint did not answer within 5s")
	}
	return rec
}

func FuzzEndpointPost(f *testing.F) {
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range []struct {
		body, version, method, name string
		session                     bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modern + `,"name":"q","arguments":{}}}`, mcpwire.Modern, "tools/call", "q", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modern + `,"name":"q","arguments":{}}}`, mcpwire.Modern, "tools/call", "p", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modern + `,"name":"é","arguments":{}}}`, mcpwire.Modern, "tools/call", "=?base64?w6k=?=", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modern + `,"name":"q","Name":"r"}}`, mcpwire.Modern, "tools/call", "q", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + modern + `}}`, mcpwire.Modern, "tools/list", "", false},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{` + modern + `,"name":"q"}}`, mcpwire.Modern, "tools/call", "q", false},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + modern + `}}`, mcpwire.Modern, "initialize", "", false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{}}}`, "", "", "", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{}}}`, "2025-06-18", "", "", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q","arguments":{}}}`, mcpwire.Modern, "tools/call", "q", true},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"q"}}`, "", "", "", true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"ping"}`, "", "", "", true},
		{fuzzInit, "", "", "", false},
		{`{"jsonrpc":"2.0","id":2,"result":{}}`, "", "", "", true},
		{`[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`, mcpwire.Modern, "tools/call", "", false},
	} {
		f.Add([]byte(s.body), s.version, s.method, s.name, s.session, false)
	}
	f.Fuzz(func(t *testing.T, body []byte, version, method, name string, session, lastEventID bool) {
		s := &seen{}
		e := NewEndpoint(standInOptions(s))
		defer e.Close()
		var sid string
		if session {
			r := serve(t, e, newPost([]byte(fuzzInit), "", "", "", ""))
			if sid = r.Header().Get(mcpwire.HeaderSessionID); sid == "" {
				t.Fatalf("initialize opened no session: %d %s", r.Code, r.Body)
			}
			s.add(func() { s.legacy = nil })
		}
		req := newPost(body, version, method, name, sid)
		if lastEventID {
			req.Header.Set(mcpwire.HeaderLastEventID, "1")
		}
		rec := serve(t, e, req)
		checkAnswer(t, rec)

		m, perr := jsonrpc.ParseMessage(body)
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, got := range s.legacy {
			if perr != nil || !sameMessage(got, m) {
				t.Fatalf("a session got %q for the body %q", got.Encode(), body)
			}
			if _, v := requestMeta(m); mcpwire.IsStateless(v) || mcpwire.IsStateless(version) {
				t.Fatalf("a 2026-07-28 message reached a session: %q (header %q)", body, version)
			}
		}
		for _, sr := range s.served {
			if perr != nil || !sameMessage(sr.m, m) {
				t.Fatalf("the handler got %q for the body %q", sr.m.Encode(), body)
			}
			checkServed(t, req.Header, sr)
		}
		for _, n := range s.notified {
			if perr != nil || !sameMessage(n, m) || m.Kind() == jsonrpc.KindRequest {
				t.Fatalf("Notify got %q for the body %q", n.Encode(), body)
			}
		}
		// Every tools/call attempt the transport refused itself is told.
		handled := len(s.served)+len(s.notified) > 0
		era := mcpwire.IsStateless(version)
		if perr == nil {
			_, v := requestMeta(m)
			era = era || mcpwire.IsStateless(v)
		}
		if !handled && MayBeToolsCall(body) && (perr != nil || era) && s.refused == 0 {
			t.Fatalf("a tools/call attempt was refused (HTTP %d %s) but not told to Refused: %q (header %q)", rec.Code, rec.Body, body, version)
		}
	})
}

func newPost(body []byte, version, method, name, sid string) *http.Request {
	req := httptest.NewRequest("POST", "/mcp/s", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range map[string]string{mcpwire.HeaderProtocolVersion: version, mcpwire.HeaderMethod: method, mcpwire.HeaderName: name, mcpwire.HeaderSessionID: sid} {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	return req
}

// sameMessage reports whether a and b are the same envelope.
func sameMessage(a, b *jsonrpc.Message) bool {
	return a.Method == b.Method && jsonrpc.IDKey(a.ID) == jsonrpc.IDKey(b.ID) && bytes.Equal(a.Params, b.Params) && a.Kind() == b.Kind()
}

// checkServed: a stateless request reached the handler only with headers
// and _meta that say what its body says.
func checkServed(t *testing.T, h http.Header, sr servedReq) {
	t.Helper()
	m := sr.m
	_, v := requestMeta(m)
	switch {
	case m.Kind() != jsonrpc.KindRequest:
		t.Fatalf("Serve got a non-request %q", m.Encode())
	case h.Get(mcpwire.HeaderProtocolVersion) != mcpwire.Modern || v != mcpwire.Modern || sr.req.Version != mcpwire.Modern:
		t.Fatalf("served with protocol header %q and _meta version %q: %q", h.Get(mcpwire.HeaderProtocolVersion), v, m.Encode())
	case !isObject(sr.req.Capabilities):
		t.Fatalf("served without client capabilities: %q", m.Encode())
	case h.Get(mcpwire.HeaderMethod) != m.Method:
		t.Fatalf("served with Mcp-Method %q for method %q", h.Get(mcpwire.HeaderMethod), m.Method)
	case h.Get(mcpwire.HeaderLastEventID) != "":
		t.Fatalf("served with Last-Event-ID: %q", m.Encode())
	case mcpwire.RemovedInModern(m.Method):
		t.Fatalf("served a method removed in %s: %q", mcpwire.Modern, m.Method)
	}
	field, required := nameField(m.Method)
	if field == "" || (!required && h.Get(mcpwire.HeaderName) == "") {
		return
	}
	decoded, ok := mcp.DecodeHeaderValue(h.Get(mcpwire.HeaderName))
	var body string
	if err := json.Unmarshal(jsonrpc.Field(m.Params, field), &body); !ok || err != nil || decoded != body {
		t.Fatalf("served with Mcp-Name %q (decoded %q, ok %v) for params.%s %q (%v): %q", h.Get(mcpwire.HeaderName), decoded, ok, field, body, err, m.Encode())
	}
}

// knownStatus are the statuses an MCP POST may be answered with here.
var knownStatus = []int{http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusNotFound,
	http.StatusRequestEntityTooLarge, http.StatusTooManyRequests, http.StatusServiceUnavailable}

// checkAnswer: a known status, and a body of valid JSON-RPC (plain or as
// SSE events).
func checkAnswer(t *testing.T, rec *httptest.ResponseRecorder) {
	t.Helper()
	if !slices.Contains(knownStatus, rec.Code) {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	body := rec.Body.Bytes()
	var msgs [][]byte
	switch ct := rec.Header().Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		for _, line := range strings.Split(string(body), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				msgs = append(msgs, []byte(d))
			}
		}
	case strings.HasPrefix(ct, "application/json"):
		msgs = append(msgs, body)
	}
	for _, msg := range msgs {
		if err := validOutgoing(msg); err != nil {
			t.Fatalf("HTTP %d answered with %v: %q", rec.Code, err, msg)
		}
	}
}

// validOutgoing checks a message the transport wrote: JSON-RPC 2.0, a
// request or notification (a method), or a response (an id, possibly
// null, with exactly one of result and error).
func validOutgoing(msg []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(msg, &m); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if string(m["jsonrpc"]) != `"2.0"` {
		return errors.New(`no "jsonrpc": "2.0"`)
	}
	_, hasResult := m["result"]
	_, hasError := m["error"]
	_, hasID := m["id"]
	if _, ok := m["method"]; ok || (hasID && hasResult != hasError) {
		return nil
	}
	return errors.New("neither a request nor a response")
}

// FuzzServeStdio: the same properties for lines on stdio, where nothing
// but _meta says the era.
func FuzzServeStdio(f *testing.F) {
	modern := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, s := range []string{
		fuzzInit + "\n" + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"q"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modern + `,"name":"q"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"q"}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{` + modern + `,"name":"q"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + modern + `,"name":"q","name":"r"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{` + modern + `}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\r\n\"method\":\"ping\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		s := &seen{}
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ServeStdio(ctx, standInOptions(s), bytes.NewReader(input), &out); err != nil && ctx.Err() != nil {
			t.Fatalf("ServeStdio hung: %v", err)
		}
		for _, line := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			if err := validOutgoing(line); err != nil {
				t.Fatalf("wrote %v: %q", err, line)
			}
		}
		lines := map[string]*jsonrpc.Message{}
		for _, raw := range bytes.Split(input, []byte("\n")) {
			if m, err := jsonrpc.ParseMessage(bytes.TrimSpace(raw)); err == nil {
				lines[string(m.Encode())] = m
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, got := range s.legacy {
			m, ok := lines[string(got.Encode())]
			if !ok {
				t.Fatalf("a session got %q, which is no line of the input", got.Encode())
			}
			if _, v := requestMeta(m); mcpwire.IsStateless(v) {
				t.Fatalf("a 2026-07-28 message reached the session: %q", got.Encode())
			}
		}
		for _, sr := range s.served {
			if _, ok := lines[string(sr.m.Encode())]; !ok {
				t.Fatalf("the handler got %q, which is no line of the input", sr.m.Encode())
			}
			if _, v := requestMeta(sr.m); v != mcpwire.Modern || !isObject(sr.req.Capabilities) || mcpwire.RemovedInModern(sr.m.Method) || sr.m.Kind() != jsonrpc.KindRequest {
				t.Fatalf("served %q (version %q)", sr.m.Encode(), v)
			}
		}
	})
}
