package workers

import (
	"sync"
	"testing"
)

// Functions handed to a pool run concurrently: one that
// blocks never holds up the next, and a worker kept idle takes new work.
func TestRunConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	w := New(&wg, stop)
	const n = 4
	started := make(chan int, n)
	release := make(chan struct{})
	for i := range n {
		w.Go(func() {
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
		w.Go(func() { close(done) })
		<-done
	}
	close(stop)
	wg.Wait() // every worker ends with the session
}

// BenchmarkGo is a request's hand-off: to an idle worker
// (the usual case) instead of a new goroutine.
func BenchmarkGo(b *testing.B) {
	var wg sync.WaitGroup
	stop := make(chan struct{})
	w := New(&wg, stop)
	done := make(chan struct{})
	for b.Loop() {
		w.Go(func() { done <- struct{}{} })
		<-done
	}
	close(stop)
	wg.Wait()
}
