package mcpproxy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestForwarderProgressTokens: two clients using the same progress token
// over one connection each get their own progress back under their own
// token; the server only ever sees the relay's tokens.
func TestForwarderProgressTokens(t *testing.T) {
	t.Parallel()
	f, err := NewForwarder(context.Background(), tinyConfig("tiny"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Initialize(context.Background(), ClientInfo{Name: "toolgate", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mu sync.Mutex
			var got []string
			res, rpcErr, err := f.Do(context.Background(), "tools/call", "progress", []byte(`{"name":"progress","arguments":{},"_meta":{"progressToken":"same"}}`), func(m []byte) {
				mu.Lock()
				got = append(got, string(m))
				mu.Unlock()
			})
			if err != nil || rpcErr != nil || !strings.Contains(string(res), "progressed") {
				t.Errorf("client %d: %s %s %v", i, res, rpcErr, err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 1 || !strings.Contains(got[0], `"progressToken":"same"`) {
				t.Errorf("client %d progress %q", i, got)
			}
		}()
	}
	wg.Wait()
}

// TestForwarderListeners: notifications that belong to no request go to
// every listener; a stopped listener gets no more. A legacy server's
// request to the client cannot reach a stateless client: it is answered
// with an error.
func TestForwarderListeners(t *testing.T) {
	t.Parallel()
	f, err := NewForwarder(context.Background(), tinyConfig("tiny"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Initialize(context.Background(), ClientInfo{Name: "toolgate", Version: "1"}); err != nil {
		t.Fatal(err)
	}
	a, b := make(chan string, 4), make(chan string, 4)
	stopA := f.Listen(func(m []byte) { a <- string(m) })
	defer f.Listen(func(m []byte) { b <- string(m) })()
	call := func(tool string) string {
		res, _, err := f.Do(context.Background(), "tools/call", tool, []byte(`{"name":"`+tool+`","arguments":{}}`), nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(res)
	}
	call("changed")
	for _, ch := range []chan string{a, b} {
		select {
		case m := <-ch:
			if !strings.Contains(m, "list_changed") {
				t.Errorf("listener got %s", m)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a listener got nothing")
		}
	}
	stopA()
	call("changed")
	<-b
	select {
	case m := <-a:
		t.Errorf("stopped listener got %s", m)
	default:
	}
	if res := call("ask"); !strings.Contains(res, "client said") {
		t.Errorf("server request: %s", res)
	}
}

// TestForwarderStateless: over a 2026-07-28 server (mcp-go's) each
// request is its own POST carrying its _meta.
func TestForwarderStateless(t *testing.T) {
	t.Parallel()
	_, url := servertest.GoServer(t)
	f, err := NewForwarder(context.Background(), (&transport.Config{ID: "go", URL: url, Timeout: 10 * time.Second}).Stateless())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	params := ModernMeta(json.RawMessage(`{"name":"echo","arguments":{"text":"stateless"}}`), ClientInfo{Name: "toolgate", Version: "1"})
	res, rpcErr, err := f.Do(context.Background(), "tools/call", "echo", params, nil)
	if err != nil || rpcErr != nil || !strings.Contains(string(res), "stateless") {
		t.Errorf("%s %s %v", res, rpcErr, err)
	}
}
