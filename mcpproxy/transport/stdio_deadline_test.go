package transport

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestStdioSendBoundedByDeadline: to a server that reads nothing, a send
// is bounded by its context's deadline when that comes before the write
// bound (a tool's timeout shorter than the server's), and a second sender
// waiting for the stuck one is bounded by its own deadline, not the
// first's write bound plus its own. Bounds carry a generous 0.5 s margin
// for a loaded machine: correctness bounds, not benchmarks.
func TestStdioSendBoundedByDeadline(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig("tiny", "TG_TINY_NOREAD=1")
	cfg.Timeout = 30 * time.Second // the write bound: 10 s
	c, err := dialStdio(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := []byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", 1<<20) + `"}`)
	const bound = 400 * time.Millisecond
	var wg sync.WaitGroup
	errs := make([]error, 2)
	took := make([]time.Duration, 2)
	for i := range 2 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), bound)
			defer cancel()
			start := time.Now()
			errs[i] = c.Send(ctx, big, nil)
			took[i] = time.Since(start)
		})
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] == nil {
			t.Errorf("send %d to a server reading nothing succeeded", i)
		}
		if took[i] > bound+500*time.Millisecond {
			t.Errorf("send %d took %v with a %v deadline: %v", i, took[i].Round(time.Millisecond), bound, errs[i])
		}
	}
}

// TestStdioStoppedReadingNamedOnExit: when a write's bound stops a server
// that reads nothing, the connection's end says why first — a caller
// that hears of the exit before its own write returns (the session's
// pending requests) is told the server stopped reading, not only that it
// exited.
func TestStdioStoppedReadingNamedOnExit(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig("tiny", "TG_TINY_NOREAD=1")
	c, err := dialStdio(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := []byte(`{"jsonrpc":"2.0","method":"x","params":"` + strings.Repeat("y", 1<<20) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := c.Send(ctx, big, nil); err == nil || !strings.Contains(err.Error(), "stopped reading its input") {
		t.Fatalf("send to a server reading nothing: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the stopped server did not end")
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "stopped reading its input") || !strings.Contains(err.Error(), `server "tiny" exited`) {
		t.Errorf("the connection ended with %v, want the reason first and the exit after", err)
	}
}
