package audit

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestGroupCommit: while the file lock is held elsewhere (another process
// mid-append), 16 concurrent Appends queue behind one leader; once the lock
// is free they go out in exactly two batches (the leader's own, then all
// the others together), and every Append returns only after its batch.
func TestGroupCommit(t *testing.T) {
	t.Parallel()
	l, path := openSynced(t)
	other, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := lockFile(other); err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- l.Append(&Event{Agent: "g", Decision: "deny", Reason: string(rune('a' + i))})
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		queued, leading := l.batch.QueueLen()
		if leading && queued == n-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue never filled: %d queued, leader %v", queued, leading)
		}
		time.Sleep(time.Millisecond) // polling a condition, not synchronising
	}
	if err := unlockFile(other); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b, e := l.Stats(); b != 2 || e != n {
		t.Errorf("%d batches for %d events, want 2 for %d", b, e, n)
	}
	if rep, err := VerifyFile(path); err != nil || rep.Events != n {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestOnCommitObservesEachBatch: the observer hears of every group commit
// with its size, summing to the events appended.
func TestOnCommitObservesEachBatch(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sizes []int
	var total time.Duration
	l, err := Open(filepath.Join(t.TempDir(), "audit.jsonl"), Options{OnCommit: func(d time.Duration, n int) {
		mu.Lock()
		defer mu.Unlock()
		sizes = append(sizes, n)
		total += d
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := l.Append(&Event{Agent: "g", Decision: "deny"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	sum := 0
	for _, n := range sizes {
		sum += n
	}
	if b, _ := l.Stats(); sum != 8 || int64(len(sizes)) != b || total <= 0 {
		t.Fatalf("observed batches %v (total %s), want them to sum to 8 over %d batches", sizes, total, b)
	}
}
