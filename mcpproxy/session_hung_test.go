package mcpproxy

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestHungServerCostsTheTimeout is a stdio server that answers initialize
// and then reads nothing more: a call costs its own timeout (here a tool's
// 1 s override under the server's 10 s), the send to its full stdin
// included — not the write bound (the server's timeout) first. The bound
// asserted is the timeout plus a generous 0.5 s for a loaded machine: a
// correctness bound, not a benchmark.
func TestHungServerCostsTheTimeout(t *testing.T) {
	t.Parallel()
	const timeout = time.Second
	for _, c := range []struct {
		name, args string
	}{
		{"unanswered", `{"text":"hi"}`},
		// Larger than a pipe's buffer: the send itself cannot finish.
		{"stdin full", `{"text":"` + strings.Repeat("x", 1<<20) + `"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := newRecorder()
			cfg := tinyConfig("hung", "TG_TINY_HANG_AFTER_INIT=1")
			cfg.TimeoutFor = map[string]time.Duration{"echo": timeout}
			s := startSession(t, cfg, rec, Hooks{CallTool: forwardAll})
			start := time.Now()
			s.HandleClient(context.Background(), msg(t, callText("1", "echo", c.args)))
			m := rec.wait(t, `"id":1`)
			if d := time.Since(start); d > timeout+500*time.Millisecond {
				t.Errorf("answered after %v with a %v timeout: %s", d.Round(time.Millisecond), timeout, m.msg[:min(len(m.msg), 300)])
			}
			if !strings.Contains(m.msg, `"error"`) && !strings.Contains(m.msg, `"isError":true`) {
				t.Errorf("a hung server's call answered %s", m.msg[:min(len(m.msg), 300)])
			}
		})
	}
}
