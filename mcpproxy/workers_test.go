package mcpproxy

import (
	"sync"
	"testing"
)

// Requests handed to a session's workers run concurrently: one that
// blocks never holds up the next, and a worker kept idle takes new work.
func TestWorkersRunConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	w := newWorkers(&wg, stop)
	const n = 4
	started := make(chan int, n)
	release := make(chan struct{})
	for i := range n {
		w.run(func() {
			started <- i
			<-release
		})
	}
	seen := map[int]bool{}
	for range n {
		seen[<-started] = true
	}
	if len(seen) != n {
		t.Fatalf("started %v, want all %d", seen, n)
	}
	close(release)
	// Sequential requests after the burst: each runs (on an idle worker
	// or a new one).
	for range 2 * n {
		done := make(chan struct{})
		w.run(func() { close(done) })
		<-done
	}
	close(stop)
	wg.Wait() // every worker ends with the session
}

// BenchmarkWorkersRun is a session's request hand-off: to an idle worker
// (the usual case) instead of a new goroutine.
func BenchmarkWorkersRun(b *testing.B) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	w := newWorkers(&wg, stop)
	done := make(chan struct{})
	for b.Loop() {
		w.run(func() { done <- struct{}{} })
		<-done
	}
	close(stop)
	wg.Wait()
}
