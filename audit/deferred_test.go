package audit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// openSynced opens a fresh log with Fsync in a test's directory, closed
// when the test ends, and returns it and its path.
func openSynced(t *testing.T) (*Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{Fsync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path
}

// unsynced reports whether l holds lines written but not yet synced.
func (l *Log) unsynced() bool {
	l.dmu.Lock()
	defer l.dmu.Unlock()
	return l.dirty
}

// TestAppendDeferred: a deferred event is in the file, chained, when
// AppendDeferred returns (readers see it at once); its fsync is the next
// Append's (a decision's: syncing it syncs every line before it) or the
// deferred sync's within DeferredSyncWithin, and Close syncs what is left.
func TestAppendDeferred(t *testing.T) {
	t.Parallel()
	l, path := openSynced(t)
	if err := l.Append(&Event{Agent: "a", Decision: "allow", Action: "command:p:c"}); err != nil {
		t.Fatal(err)
	}
	if l.unsynced() {
		t.Fatal("an Append left the file unsynced")
	}
	out := &Event{Agent: "a", Decision: "completed", Action: "command:p:c"}
	if err := l.AppendDeferred(out); err != nil {
		t.Fatal(err)
	}
	if out.Seq != 2 || out.Hash == "" {
		t.Fatalf("deferred event not sealed: seq %d hash %q", out.Seq, out.Hash)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(bytes.NewReader(data)); err != nil || rep.Events != 2 {
		t.Fatalf("the deferred event is not in the file when AppendDeferred returned: %+v, %v", rep, err)
	}
	if !l.unsynced() {
		t.Fatal("AppendDeferred synced (want: written, sync deferred)")
	}
	// The next decision's Append syncs the outcome with it.
	if err := l.Append(&Event{Agent: "a", Decision: "allow", Action: "command:p:c"}); err != nil {
		t.Fatal(err)
	}
	if l.unsynced() {
		t.Fatal("an Append after a deferred event left it unsynced")
	}
	// With no Append after it, the deferred sync comes within the bound.
	if err := l.AppendDeferred(&Event{Agent: "a", Decision: "completed", Action: "command:p:c"}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for l.unsynced() {
		if time.Since(start) > 5*time.Second {
			t.Fatalf("deferred event still unsynced after %v (bound %v)", time.Since(start), DeferredSyncWithin)
		}
		time.Sleep(time.Millisecond) // polling a condition, not synchronising
	}
	// Close syncs a deferred event still pending.
	if err := l.AppendDeferred(&Event{Agent: "a", Decision: "completed", Action: "command:p:c"}); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if l.unsynced() {
		t.Fatal("Close left a deferred event unsynced")
	}
	if rep, err := VerifyFile(path); err != nil || rep.Events != 5 {
		t.Fatalf("after close: %+v, %v", rep, err)
	}
	if err := l.AppendDeferred(&Event{Agent: "a", Decision: "completed"}); !errors.Is(err, ErrClosed) {
		t.Fatalf("AppendDeferred after Close: %v, want ErrClosed", err)
	}
}

// TestDeferredSyncFailureFailsNextCommit: a deferred fsync that failed is
// returned by the next commit, so the audit fails closed (the gateway then
// refuses calls until an append succeeds) instead of the loss going
// unnoticed; the commit after it works again.
func TestDeferredSyncFailureFailsNextCommit(t *testing.T) {
	t.Parallel()
	l, _ := openSynced(t)
	l.dmu.Lock()
	l.syncErr = errors.New("sync: input/output error")
	l.dmu.Unlock()
	if err := l.Append(&Event{Agent: "a", Decision: "allow"}); err == nil {
		t.Fatal("an Append after a failed deferred sync succeeded")
	}
	if err := l.Append(&Event{Agent: "a", Decision: "allow"}); err != nil {
		t.Fatalf("the append after the reported failure: %v", err)
	}
}

// TestBatcherDeferredCommit: a batch of deferred events alone goes to the
// deferred commit; a batch holding any other event goes to the full
// commit, deferred events and all.
func TestBatcherDeferredCommit(t *testing.T) {
	t.Parallel()
	var full, deferred [][]*Event
	var release chan struct{}
	b := NewDeferringBatcher(func(evs []*Event) ([]error, error) {
		if release != nil {
			<-release
		}
		full = append(full, evs)
		return nil, nil
	}, func(evs []*Event) ([]error, error) {
		deferred = append(deferred, evs)
		return nil, nil
	})
	if err := b.AppendDeferred(&Event{Reason: "d1"}); err != nil {
		t.Fatal(err)
	}
	if len(deferred) != 1 || len(full) != 0 {
		t.Fatalf("a lone deferred event: %d deferred, %d full commits", len(deferred), len(full))
	}
	// Hold a full commit, queue a deferred event behind it and then a
	// full one: they go out together, as a full commit.
	release = make(chan struct{})
	done := make(chan error, 3)
	go func() { done <- b.Append(&Event{Reason: "a1"}) }()
	waitQueue(t, b, 0)
	go func() { done <- b.AppendDeferred(&Event{Reason: "d2"}) }()
	waitQueue(t, b, 1)
	go func() { done <- b.Append(&Event{Reason: "a2"}) }()
	waitQueue(t, b, 2)
	close(release)
	for range 3 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if len(deferred) != 1 || len(full) != 2 || len(full[1]) != 2 || full[1][0].Reason != "d2" || full[1][1].Reason != "a2" {
		t.Fatalf("batches: full %v, deferred %v", reasons(full), reasons(deferred))
	}
}

// waitQueue polls until b has a leader and queued events behind it.
func waitQueue(t *testing.T, b *Batcher, queued int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		q, leading := b.QueueLen()
		if leading && q == queued {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue: %d queued, leader %v; want %d", q, leading, queued)
		}
		time.Sleep(time.Millisecond) // polling a condition, not synchronising
	}
}

func reasons(batches [][]*Event) [][]string {
	var out [][]string
	for _, b := range batches {
		var r []string
		for _, ev := range b {
			r = append(r, ev.Reason)
		}
		out = append(out, r)
	}
	return out
}
