package mcpproxy

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
)

// TestListRetryBackoff: the wait doubles with each failure in a row, from
// the minimum to the maximum.
func TestListRetryBackoff(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    int
		want time.Duration
	}{{1, ListRetryMin}, {2, 2 * ListRetryMin}, {3, 4 * ListRetryMin}, {4, 8 * ListRetryMin}, {5, ListRetryMax}, {50, ListRetryMax}} {
		if got := ListRetryBackoff(c.n); got != c.want {
			t.Errorf("after %d failures: %v, want %v", c.n, got, c.want)
		}
	}
}

// TestListerPaces is the hung server's listing retried on every request:
// the first attempt is waited for; after it failed, requests go on at once
// and an attempt runs only when its backoff is over, in the background,
// one at a time.
func TestListerPaces(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	clock.Store(time.Now().UnixNano())
	l := &Lister{now: func() time.Time { return time.Unix(0, clock.Load()) }}
	var attempts atomic.Int32
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer l.Close()
	defer free() // before Close, which waits for the attempt
	var running sync.WaitGroup
	failing := func(ctx context.Context) error {
		if attempts.Add(1) > 1 {
			defer running.Done()
			<-release // a background attempt that hangs like its server
		}
		return errors.New("server hung")
	}
	l.Ensure(context.Background(), failing)
	if attempts.Load() != 1 {
		t.Fatalf("the first attempt was not made in the caller: %d", attempts.Load())
	}
	for range 100 {
		l.Ensure(context.Background(), failing) // requests within the backoff
	}
	if n := attempts.Load(); n != 1 {
		t.Fatalf("%d attempts within the backoff, want 1", n)
	}
	clock.Add(int64(ListRetryMin))
	running.Add(1)
	done := make(chan struct{})
	go func() {
		l.Ensure(context.Background(), failing) // due: starts in the background
		for range 100 {
			l.Ensure(context.Background(), failing) // one at a time
		}
		close(done)
	}()
	<-done // the caller did not wait on the hung attempt
	servertest.WaitFor(t, "the background attempt", func() bool { return attempts.Load() >= 2 })
	if n := attempts.Load(); n != 2 {
		t.Fatalf("%d attempts once due, want 2", n)
	}
	free()
	running.Wait()
	servertest.WaitFor(t, "the background attempt recorded", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return !l.running && l.failures == 2
	})
	clock.Add(int64(ListRetryMin)) // less than the doubled backoff
	l.Ensure(context.Background(), failing)
	if n := attempts.Load(); n != 2 {
		t.Fatalf("an attempt %v after two failures; the backoff is %v", ListRetryMin, ListRetryBackoff(2))
	}
}

// TestListerCloseStops: Close cancels an attempt under way in the
// background and waits for it.
func TestListerCloseStops(t *testing.T) {
	t.Parallel()
	var clock atomic.Int64
	l := &Lister{now: func() time.Time { return time.Unix(0, clock.Load()) }}
	l.Ensure(context.Background(), func(context.Context) error { return errors.New("down") })
	clock.Add(int64(ListRetryMax))
	var ended atomic.Bool
	started := make(chan struct{})
	l.Ensure(context.Background(), func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		ended.Store(true)
		return ctx.Err()
	})
	<-started
	l.Close()
	if !ended.Load() {
		t.Fatal("Close returned before the background attempt ended")
	}
	l.Ensure(context.Background(), func(context.Context) error { t.Error("an attempt after Close"); return nil })
}
