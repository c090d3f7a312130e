package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// stdioClient drives ServeStdio through pipes, as a harness would.
type stdioClient struct {
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func startStdio(t *testing.T, opts Options) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{in: inW, lines: make(chan string, 64), done: make(chan error, 1)}
	go func() {
		err := ServeStdio(context.Background(), opts, inR, outW)
		outW.Close()
		c.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *stdioClient) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func (c *stdioClient) next(t *testing.T) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			t.Fatal("stdout ended")
		}
		return l
	case <-time.After(5 * time.Second):
		t.Fatal("no line from ServeStdio")
	}
	return ""
}

// TestStdioEras: one stdio connection serves both eras per message: a
// 2026-07-28 request goes to the stateless handler and opens no session;
// the first other message opens the one legacy session.
func TestStdioEras(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sessions []*scripted
	h := &fakeHandler{}
	c := startStdio(t, Options{Modern: h, Legacy: func(_ context.Context, peer mcpwire.Peer) (Session, error) {
		s := &scripted{peer: peer, handle: func(_ context.Context, m *jsonrpc.Message, peer mcpwire.Peer) {
			// A server's pretty-printed answer still goes out as one line.
			reply(peer, m, "{\n  \"pretty\": true\n}")
		}}
		mu.Lock()
		sessions = append(sessions, s)
		mu.Unlock()
		return s, nil
	}})
	c.send(t, modernBody("tools/list", ""))
	if l := c.next(t); !strings.Contains(l, `"resultType":"complete"`) {
		t.Errorf("modern answer %s", l)
	}
	mu.Lock()
	n := len(sessions)
	mu.Unlock()
	if n != 0 {
		t.Fatal("a stateless request opened a session")
	}
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`)
	if l := c.next(t); !strings.Contains(l, `"protocolVersion":"2025-11-25"`) {
		t.Errorf("initialize answer %s", l)
	}
	c.send(t, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if l := c.next(t); l != `{"jsonrpc":"2.0","id":1,"result":{"pretty":true}}` {
		t.Errorf("legacy answer %q", l)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`)
	if l := c.next(t); !strings.Contains(l, "-32600") {
		t.Errorf("id-less call: %s", l)
	}
	c.send(t, `not json`)
	if l := c.next(t); !strings.Contains(l, "-32700") || !strings.Contains(l, `"id":null`) {
		t.Errorf("garbage: %s", l)
	}
	c.in.Close()
	if err := <-c.done; err != nil {
		t.Errorf("ServeStdio at EOF: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sessions) != 1 || !sessions[0].closed {
		t.Errorf("%d sessions, closed at the end: %v", len(sessions), len(sessions) == 1 && sessions[0].closed)
	}
}

// TestStdioModernRefusals: a stateless message on stdio is checked as over
// HTTP (there are no headers to compare).
func TestStdioModernRefusals(t *testing.T) {
	t.Parallel()
	h := &fakeHandler{}
	c := startStdio(t, Options{Modern: h})
	cases := []struct{ in, want string }{
		{strings.Replace(modernBody("tools/list", ""), mcpwire.Modern, "2099-01-01", 1), "-32022"},
		{modernBody("ping", ""), "-32601"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`, "missing _meta field"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, "clientCapabilities"},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x",` + meta + `}}`, "-32600"},
	}
	for _, cs := range cases {
		c.send(t, cs.in)
		if l := c.next(t); !strings.Contains(l, cs.want) {
			t.Errorf("%s: %s, want %s", cs.in, l, cs.want)
		}
	}
	// A legacy message where no session era is served is ignored.
	c.send(t, `{"jsonrpc":"2.0","id":"tg-1","result":{}}`)
	c.send(t, modernBody("tools/list", ""))
	if l := c.next(t); !strings.Contains(l, "complete") {
		t.Errorf("after an ignored message: %s", l)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.notified) != 1 {
		t.Errorf("notified %q", h.notified)
	}
}

// TestStdioModernCancel: notifications/cancelled ends a stateless request
// served on stdio.
func TestStdioModernCancel(t *testing.T) {
	t.Parallel()
	cancelled := make(chan struct{})
	h := &fakeHandler{serve: func(ctx context.Context, m *jsonrpc.Message, _ Request, out mcpwire.Peer) {
		<-ctx.Done()
		close(cancelled)
		out.Send((&jsonrpc.Message{ID: m.ID, Error: jsonrpc.ErrorObject(-1, "cancelled")}).Encode(), m.ID, false)
	}}
	c := startStdio(t, Options{Modern: h})
	c.send(t, strings.Replace(modernBody("tools/call", `"name":"slow"`), `"id":1`, `"id":"r7"`, 1))
	waitFor(t, "the call to start", func() bool { h.mu.Lock(); defer h.mu.Unlock(); return len(h.served) == 1 })
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r7",`+meta+`}}`)
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("not cancelled")
	}
	c.next(t)
}

// TestStdioLimits: a line longer than the bound ends the connection with
// an error; a session that cannot start ends it too.
func TestStdioLimits(t *testing.T) {
	t.Parallel()
	c := startStdio(t, Options{Modern: &fakeHandler{}})
	go func() { _, _ = io.WriteString(c.in, `{"a":"`+strings.Repeat("x", maxClientMessage+10)+"\n") }()
	if err := <-c.done; err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("oversized line: %v", err)
	}
	c = startStdio(t, Options{Legacy: func(context.Context, mcpwire.Peer) (Session, error) { return nil, errors.New("cannot start") }})
	c.send(t, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if err := <-c.done; err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Errorf("failed session: %v", err)
	}
}

// TestStdioContextEnds: ServeStdio returns when its context ends.
func TestStdioContextEnds(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, Options{}, inR, io.Discard) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ServeStdio did not return")
	}
}

func TestAppendLine(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"a":1}`:                   `{"a":1}`,
		"{\n \"a\": \"x\\ny\"\r\n}": `{"a":"x\ny"}`,
		"not json\n":                "not json\n",
	}
	for in, want := range cases {
		if got := string(appendLine(nil, []byte(in))); got != want {
			t.Errorf("appendLine(%q) = %q, want %q", in, got, want)
		}
	}
	var b strings.Builder
	u := &stdioUpstream{out: &b}
	u.Send([]byte(`{"x":1}`), nil, false)
	u.err = errors.New("closed")
	u.Send([]byte(`{"y":2}`), json.RawMessage("1"), true)
	if b.String() != "{\"x\":1}\n" {
		t.Errorf("%q", b.String())
	}
}
