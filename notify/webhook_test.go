package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/redact"
)

const secret = "hunter2-very-secret-value"

func heldRequest(args string) approvals.Request {
	return approvals.Request{ID: "ap-1", Agent: "writer", Action: "command:call:notes:append", Tier: "cautious",
		Reason: "write needs approval", Arguments: json.RawMessage(args), Argv: []string{"echo", secret},
		Created: time.Now(), Expires: time.Now().Add(time.Minute)}
}

func newHook(t *testing.T, url string, edit func(*Options)) (*Webhook, chan Failure) {
	t.Helper()
	failed := make(chan Failure, 16)
	opts := Options{URL: url, Headers: map[string]string{"Authorization": "Bearer hook-token"}, Redactor: redact.New(map[string]string{"k": secret}),
		Approve:   func(id string) string { return "toolgate approvals approve " + id },
		Deny:      func(id string) string { return "toolgate approvals deny " + id },
		OnFailure: func(f Failure) { failed <- f }, Backoff: time.Millisecond, Timeout: 200 * time.Millisecond}
	if edit != nil {
		edit(&opts)
	}
	w, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w, failed
}

// TestWebhookDelivers: the event carries what an operator needs, with the
// headers, and no credential — in the arguments, argv or a cut preview.
func TestWebhookDelivers(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	bodies := make(chan []byte, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- r
		bodies <- b
	}))
	t.Cleanup(srv.Close)
	w, _ := newHook(t, srv.URL+"/hook", nil)
	w.Held(heldRequest(`{"text": "` + secret + `"}`))
	r := <-got
	var ev Event
	if err := json.Unmarshal(<-bodies, &ev); err != nil {
		t.Fatal(err)
	}
	if r.Header.Get("Authorization") != "Bearer hook-token" || r.Header.Get("Content-Type") != "application/json" || r.Header.Get(eventTypeHeader) != "approval.held" {
		t.Errorf("headers %v", r.Header)
	}
	if ev.ID != "ap-1" || ev.Agent != "writer" || ev.Tier != "cautious" || ev.Approve != "toolgate approvals approve ap-1" || ev.Expires.IsZero() {
		t.Errorf("event %+v", ev)
	}
	all, _ := json.Marshal(ev)
	if strings.Contains(string(all), secret) || !strings.Contains(ev.Arguments, "[REDACTED:k]") {
		t.Errorf("the event leaks the credential or does not say it was redacted: %s", all)
	}
}

// TestWebhookPreviewCut: a long argument is cut to MaxPreviewBytes, and a
// credential straddling the cut is still redacted.
func TestWebhookPreviewCut(t *testing.T) {
	t.Parallel()
	red := redact.New(map[string]string{"k": secret})
	pad := strings.Repeat("x", MaxPreviewBytes-len(`{"t":"`)-5)
	got, cut := preview(red, json.RawMessage(`{"t":"`+pad+secret+`"}`))
	if !cut || strings.Contains(got, secret[:5]) || len(got) > MaxPreviewBytes+32 {
		t.Errorf("cut preview %q (cut %v)", got[len(got)-40:], cut)
	}
}

// TestWebhookRetriesAndFails: 500s are retried with backoff until they
// succeed; a 4xx is not retried; a receiver that never answers costs each
// attempt its timeout and is reported after the last; a full queue
// drops, reported, and Held never waits.
func TestWebhookRetriesAndFails(t *testing.T) {
	t.Parallel()
	t.Run("500 then 200", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) < 3 {
				w.WriteHeader(500)
			}
		}))
		t.Cleanup(srv.Close)
		w, failed := newHook(t, srv.URL, nil)
		w.Held(heldRequest(`{}`))
		deadline := time.Now().Add(10 * time.Second)
		for n.Load() < 3 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
		}
		w.Close()
		if n.Load() != 3 || len(failed) != 0 {
			t.Errorf("attempts %d, failures %d; want 3 and none", n.Load(), len(failed))
		}
	})
	t.Run("404 is not retried", func(t *testing.T) {
		t.Parallel()
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); w.WriteHeader(404) }))
		t.Cleanup(srv.Close)
		w, failed := newHook(t, srv.URL+"/secret-path?token=abc", nil)
		w.Held(heldRequest(`{}`))
		f := <-failed
		if f.Kind != failurePermanent || f.Attempts != 1 || n.Load() != 1 || strings.Contains(f.Err, "secret-path") || strings.Contains(f.Err, "abc") {
			t.Errorf("failure %+v after %d attempts", f, n.Load())
		}
	})
	t.Run("a hanging receiver", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		t.Cleanup(func() { close(release); srv.Close() })
		w, failed := newHook(t, srv.URL, func(o *Options) { o.Attempts, o.Timeout = 2, 50*time.Millisecond })
		start := time.Now()
		w.Held(heldRequest(`{}`))
		if d := time.Since(start); d > 50*time.Millisecond {
			t.Errorf("Held waited %s", d)
		}
		f := <-failed
		if f.Kind != failureExhausted || f.Attempts != 2 || !strings.Contains(f.Err, "timeout") {
			t.Errorf("failure %+v", f)
		}
	})
	t.Run("a full queue", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
		t.Cleanup(func() { close(release); srv.Close() })
		w, failed := newHook(t, srv.URL, func(o *Options) { o.Queue, o.Senders, o.Timeout = 1, 1, 10*time.Second })
		start := time.Now()
		for range 5 {
			w.Held(heldRequest(`{}`))
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("Held waited %s with a full queue", d)
		}
		if f := <-failed; f.Kind != failureQueueFull {
			t.Errorf("failure %+v, want queue-full", f)
		}
	})
}

func TestNewRefusesBadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "ftp://x", "not a url", "http://"} {
		if _, err := New(Options{URL: u}); err == nil {
			t.Errorf("New(%q) accepted", u)
		}
	}
}
