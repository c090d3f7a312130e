package transport

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpwire"
)

// hintLog records the stream hints the downstream transport gives.
type hintLog struct {
	mu     sync.Mutex
	events []string
}

func (h *hintLog) Streamed() { h.add("streamed") }
func (h *hintLog) Paused(d time.Duration) {
	h.add("paused " + d.String())
}
func (h *hintLog) add(s string) {
	h.mu.Lock()
	h.events = append(h.events, s)
	h.mu.Unlock()
}
func (h *hintLog) all() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

// pollingServer closes a call's stream after a priming event (id, retry)
// and answers on the GET that resumes it, as SEP-1699 lets a server do;
// resumeStatus, when set, is what that GET gets instead.
func pollingServer(t *testing.T, polls int, resumeStatus int) (url string, lastIDs func() []string) {
	return pollingServerRetry(t, polls, resumeStatus, "30")
}

// pollingServerRetry is pollingServer asking for retry (milliseconds).
func pollingServerRetry(t *testing.T, polls int, resumeStatus int, retry string) (url string, lastIDs func() []string) {
	var mu sync.Mutex
	var ids []string
	var pending json.RawMessage
	url = servertest.ScriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		switch r.Method {
		case http.MethodPost:
			mu.Lock()
			pending = m.ID
			mu.Unlock()
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: e0\nretry: " + retry + "\ndata: \n\n"))
			w.Write([]byte("id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n"))
		case http.MethodGet:
			last := r.Header.Get("Last-Event-ID")
			if last == "" {
				http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
				return
			}
			mu.Lock()
			ids = append(ids, last)
			n := len(ids)
			id := pending
			mu.Unlock()
			if resumeStatus != 0 {
				http.Error(w, "cannot resume", resumeStatus)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			if n < polls {
				w.Write([]byte("id: e" + string(rune('1'+n)) + "\ndata: \n\n"))
				return
			}
			w.Write([]byte("id: done\ndata: " + string((&jsonrpc.Message{ID: id, Result: json.RawMessage(`{"content":[{"type":"text","text":"after polling"}]}`)}).Encode()) + "\n\n"))
		default:
			w.WriteHeader(http.StatusOK)
		}
	})
	return url, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ids...)
	}
}

// TestPollingResumed: a server that closes a call's stream before
// answering is resumed with GET and Last-Event-ID after its retry, as
// often as it asks; the client's transport hears that the answer streams
// and each pause, with the server's retry.
func TestPollingResumed(t *testing.T) {
	t.Parallel()
	url, lastIDs := pollingServer(t, 2, 0)
	c := dial(t, &Config{ID: "poll", URL: url, Timeout: 10 * time.Second})
	initialize(t, c)
	hints := &hintLog{}
	ctx := mcpwire.WithStreamHints(context.Background(), hints)
	var seen []Incoming
	if in := request(t, ctx, c, "1", "tools/call", callParams("test_reconnection", ""), &seen); !strings.Contains(string(in.Msg), "after polling") {
		t.Fatalf("answer %s", in.Msg)
	}
	if len(seen) != 1 || !strings.Contains(string(seen[0].Msg), "notifications/progress") || string(seen[0].Via) != "1" {
		t.Errorf("before the answer: %+v", seen)
	}
	if got := lastIDs(); len(got) != 2 || got[0] != "e1" || got[1] != "e2" {
		t.Errorf("resumed from %q, want e1 then e2", got)
	}
	if got := hints.all(); len(got) != 3 || got[0] != "streamed" || got[1] != "paused 30ms" || got[2] != "paused 30ms" {
		t.Errorf("hints %q", got)
	}
}

// TestPollingRefused: a server that does not take the resume fails the
// call with a reason, rather than leaving it to time out.
func TestPollingRefused(t *testing.T) {
	t.Parallel()
	url, _ := pollingServer(t, 1, http.StatusNotFound)
	c := dial(t, &Config{ID: "poll", URL: url, Timeout: 10 * time.Second})
	initialize(t, c)
	if in := request(t, context.Background(), c, "1", "tools/call", callParams("x", ""), nil); !strings.Contains(string(in.Msg), "did not resume the response stream") {
		t.Errorf("answer %s", in.Msg)
	}
}

// TestPollingStopsWithRequest: a request that ends (the client cancelled)
// ends the resumed stream it waits on.
func TestPollingStopsWithRequest(t *testing.T) {
	t.Parallel()
	resumed, closed := make(chan struct{}), make(chan struct{})
	url := servertest.ScriptedHTTPAll(t, func(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
		switch {
		case r.Method == http.MethodPost:
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte("id: e0\nretry: 1\ndata: \n\n"))
		case r.Header.Get("Last-Event-ID") == "e0":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			close(resumed)
			<-r.Context().Done()
			close(closed)
		default:
			http.Error(w, "no", http.StatusMethodNotAllowed)
		}
	})
	c := dial(t, &Config{ID: "poll", URL: url, Timeout: 10 * time.Second})
	initialize(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	send(t, ctx, c, "1", "tools/call", callParams("x", ""))
	<-resumed
	cancel()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the resumed stream outlived the request")
	}
}

// TestNoPollingStateless: a 2026-07-28 server's streams are not resumable:
// one closed unanswered fails the call.
func TestNoPollingStateless(t *testing.T) {
	t.Parallel()
	url, lastIDs := pollingServer(t, 1, 0)
	c := dial(t, (&Config{ID: "m", URL: url, Timeout: 5 * time.Second}).Stateless())
	in := request(t, context.Background(), c, "1", "tools/call", modernParams("x"), nil)
	if !strings.Contains(string(in.Msg), "closed the response stream without answering") || len(lastIDs()) != 0 {
		t.Errorf("%s, polls %q", in.Msg, lastIDs())
	}
}

func TestCursorWait(t *testing.T) {
	t.Parallel()
	if (&sseCursor{}).wait() != defaultPollRetry {
		t.Error("default")
	}
	if (&sseCursor{hasRetry: true}).wait() != minPollRetry {
		t.Error("a zero retry is not a tight loop")
	}
	if (&sseCursor{hasRetry: true, retry: time.Second}).wait() != time.Second {
		t.Error("retry")
	}
}

// resumingHints are the hints of a client that resumes its stream at once.
type resumingHints struct {
	hintLog
	back chan struct{}
}

func (h *resumingHints) ClientResumed() <-chan struct{} { return h.back }

// TestPollingClientBack: a client that resumes its own stream before the
// server's retry passed has toolgate resume the server's stream then,
// not after the retry (the server asked for 10s here).
func TestPollingClientBack(t *testing.T) {
	t.Parallel()
	url, _ := pollingServerRetry(t, 1, 0, "10000")
	c := dial(t, &Config{ID: "poll", URL: url, Timeout: 20 * time.Second})
	initialize(t, c)
	hints := &resumingHints{back: make(chan struct{}, 1)}
	hints.back <- struct{}{}
	ctx := mcpwire.WithStreamHints(context.Background(), hints)
	start := time.Now()
	if in := request(t, ctx, c, "1", "tools/call", callParams("test_reconnection", ""), nil); !strings.Contains(string(in.Msg), "after polling") {
		t.Fatalf("answer %s", in.Msg)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("answered after %s: the server's 10s retry was waited out although the client was back", d)
	}
}
