package mcpproxy

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/internal/syncbuf"
	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// TestRestartBacksOff: a server that cannot start again (it exits at
// once, saying why on stderr) is retried with a doubling wait by one
// restart loop, never reported restored, and each failure carries its
// stderr; once it can start, the connection is restored and answers.
func TestRestartBacksOff(t *testing.T) {
	t.Parallel()
	for _, initialized := range []bool{true, false} {
		t.Run(map[bool]string{true: "after a handshake", false: "without one"}[initialized], func(t *testing.T) {
			t.Parallel()
			testRestartBacksOff(t, initialized)
		})
	}
}

func testRestartBacksOff(t *testing.T, initialized bool) {
	flag := filepath.Join(t.TempDir(), "fail")
	cfg := tinyConfig("flaky", "TG_TINY_FAIL_IF="+flag)
	var logs syncbuf.Buffer
	cfg.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	cfg.Stderr = &transport.StderrTail{}
	var mu sync.Mutex
	var failures []time.Time
	var lastErr error
	restored := make(chan struct{}, 1)
	hooks := Hooks{CallTool: forwardAll, Health: func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			select {
			case restored <- struct{}{}:
			default:
			}
			return
		}
		failures, lastErr = append(failures, time.Now()), err
	}}
	rec := newRecorder()
	var s *Session
	if initialized {
		s = startSession(t, cfg, rec, hooks)
	} else {
		var err error
		if s, err = NewSession(context.Background(), cfg, rec, hooks); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s.HandleClient(context.Background(), msg(t, callText("1", "crash", "")))
	rec.wait(t, `"id":1`)

	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(failures)
		mu.Unlock()
		if n >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d failures reported; logs:\n%s", n, logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	// failures[0] is the loss; 1.. are the restarts, 100, 200, 400 ms apart
	// at least (one loop: two would halve the gaps).
	for i := 2; i < len(failures); i++ {
		gap, least := failures[i].Sub(failures[i-1]), restartBackoffMin<<(i-1)
		if gap < least {
			t.Errorf("restart %d came %s after the one before, want at least %s", i, gap, least)
		}
	}
	if got := transport.StderrOf(lastErr); len(got) == 0 || got[len(got)-1] != "tiny: refusing to start" {
		t.Errorf("failure %v carries stderr %q, want its last line", lastErr, got)
	}
	mu.Unlock()
	if strings.Contains(logs.String(), "restored") {
		t.Errorf("a server that never answered was logged restored:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), `"retry_in"`) {
		t.Errorf("the restart failures do not say when the next try is:\n%s", logs.String())
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	select {
	case <-restored:
	case <-time.After(30 * time.Second):
		t.Fatalf("never restored once the server could start; logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "connection restored") {
		t.Errorf("restoring was not logged:\n%s", logs.String())
	}
}
