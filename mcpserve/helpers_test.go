package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// scripted is the Session behind the endpoint in these tests: it stands
// in for the gateway (a pack surface or the relay), which lives in
// packages that import this one. The transports under test are real; the
// session answers as each test scripts it.
type scripted struct {
	peer   mcpwire.Peer
	handle func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer)

	mu        sync.Mutex
	seen      []*jsonrpc.Message
	cancelled []string
	closed    bool
}

func (s *scripted) HandleClient(ctx context.Context, m *jsonrpc.Message) {
	s.mu.Lock()
	s.seen = append(s.seen, m)
	s.mu.Unlock()
	if m.Kind() != jsonrpc.KindRequest {
		return
	}
	go func() {
		if m.Method == "initialize" {
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			_ = json.Unmarshal(m.Params, &p)
			res := `{"protocolVersion":` + string(jsonrpc.Quote(mcpwire.NegotiateLegacy(p.ProtocolVersion))) + `,"capabilities":{},"serverInfo":{"name":"t","version":"1"}}`
			s.peer.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(res)}).Encode(), m.ID, false)
			return
		}
		if s.handle != nil {
			s.handle(ctx, m, s.peer)
		}
		if ctx.Err() != nil {
			s.mu.Lock()
			s.cancelled = append(s.cancelled, string(m.ID))
			s.mu.Unlock()
		}
	}()
}

func (s *scripted) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	return nil
}

func (s *scripted) wasCancelled(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.cancelled {
		if c == id {
			return true
		}
	}
	return false
}

func (s *scripted) methods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, m := range s.seen {
		out = append(out, m.Method)
	}
	return out
}

// reply answers m with result.
func reply(peer mcpwire.Peer, m *jsonrpc.Message, result string) {
	peer.Send((&jsonrpc.Message{ID: m.ID, Result: json.RawMessage(result)}).Encode(), m.ID, false)
}

// testEndpoint serves an endpoint whose sessions are scripted by handle.
type testEndpoint struct {
	e    *Endpoint
	srv  *httptest.Server
	url  string
	mu   sync.Mutex
	sess []*scripted
}

func newTestEndpoint(t *testing.T, opts Options, handle func(ctx context.Context, m *jsonrpc.Message, peer mcpwire.Peer)) *testEndpoint {
	t.Helper()
	te := &testEndpoint{}
	if opts.Legacy == nil {
		opts.Legacy = func(_ context.Context, peer mcpwire.Peer) (Session, error) {
			s := &scripted{peer: peer, handle: handle}
			te.mu.Lock()
			te.sess = append(te.sess, s)
			te.mu.Unlock()
			return s, nil
		}
	}
	te.e = NewEndpoint(opts)
	te.srv = httptest.NewServer(te.e)
	te.url = te.srv.URL
	t.Cleanup(func() {
		te.srv.CloseClientConnections()
		te.srv.Close()
		te.e.Close()
	})
	return te
}

func (te *testEndpoint) session(i int) *scripted {
	te.mu.Lock()
	defer te.mu.Unlock()
	return te.sess[i]
}

// post sends body with the given headers (name, value pairs).
func post(t *testing.T, ctx context.Context, url, body string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func get(t *testing.T, ctx context.Context, url string, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// initialize opens a session asking for version; it returns its id.
func initialize(t *testing.T, url, version string) string {
	t.Helper()
	resp := post(t, context.Background(), url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	body := readAll(t, resp)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %s %q (session %q)", resp.Status, body, sid)
	}
	return sid
}

// sseEvent is one event read from a stream.
type sseEvent struct {
	id, data string
	retry    int
	hasRetry bool
}

// sseReader reads events off a response body as they come.
type sseReader struct {
	br *bufio.Reader
}

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReader(r)} }

// next returns the next event, or false when the stream ended.
func (r *sseReader) next() (sseEvent, bool) {
	var ev sseEvent
	var data []string
	any := false
	for {
		line, err := r.br.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if any {
				ev.data = strings.Join(data, "\n")
				return ev, true
			}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		any = true
		switch field {
		case "id":
			ev.id = value
		case "data":
			data = append(data, value)
		case "retry":
			ev.retry, _ = strconv.Atoi(value)
			ev.hasRetry = true
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// hintsOf reads the stream hints a request carries.
func hintsOf(ctx context.Context) mcpwire.StreamHints { return mcpwire.StreamHintsFrom(ctx) }
