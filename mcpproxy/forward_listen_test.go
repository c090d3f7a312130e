package mcpproxy

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestForwarderListenNDJSON: a subscriptions/listen a server answers as
// newline-delimited JSON under application/json, the body kept open, is
// relayed frame by frame while it is open, each frame passed through the
// client's filter (a change it did not ask for stays behind); the server
// ending the stream ends the request, and the client ending it ends the
// server's.
func TestForwarderListenNDJSON(t *testing.T) {
	t.Parallel()
	frames := make(chan string, 4)
	serverGone := make(chan struct{}, 1)
	url := servertest.ScriptedHTTP(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case f, ok := <-frames:
				if !ok {
					return
				}
				w.Write([]byte(f + "\n"))
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				serverGone <- struct{}{}
				return
			}
		}
	})
	f, err := NewForwarder(context.Background(), (&transport.Config{ID: "ref", URL: url, Timeout: 5 * time.Second}).Stateless())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	var mu sync.Mutex
	var got []string
	seen := func(n int) bool { mu.Lock(); defer mu.Unlock(); return len(got) >= n }
	params := ModernMeta([]byte(`{"notifications":{"toolsListChanged":true}}`), ClientInfo{Name: "t", Version: "1"})
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _, err := f.Do(ctx, "subscriptions/listen", "", params, func(msg []byte) {
			mu.Lock()
			got = append(got, string(msg))
			mu.Unlock()
		})
		done <- err
	}()
	frames <- `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"notifications":{"toolsListChanged":true}}}`
	servertest.WaitFor(t, "the acknowledgement, the body still open", func() bool { return seen(1) })
	frames <- `{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}`
	frames <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`
	servertest.WaitFor(t, "the tools change", func() bool { return seen(2) })
	mu.Lock()
	if len(got) != 2 || !strings.Contains(got[1], "tools/list_changed") {
		t.Errorf("frames relayed %q, want the ack and the tools change only", got)
	}
	mu.Unlock()
	cancel()
	select {
	case <-serverGone:
	case <-time.After(5 * time.Second):
		t.Fatal("the client's end did not end the server's response")
	}
	<-done

	// The server ending its stream ends the request, with why.
	ended := make(chan string, 1)
	go func() {
		_, rpcErr, err := f.Do(context.Background(), "subscriptions/listen", "", params, nil)
		ended <- string(rpcErr) + fmt.Sprint(err)
	}()
	frames <- `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{}}`
	close(frames)
	select {
	case why := <-ended:
		if !strings.Contains(why, "closed the response without answering") {
			t.Errorf("the ended stream's request failed with %s", why)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server ended its stream and the request goes on")
	}
}
