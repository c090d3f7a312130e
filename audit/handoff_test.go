package audit

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// committerStacks opens a synced log whose OnCommit hook (run by the
// goroutine that commits, inside the commit) records that goroutine's
// stack, and returns the log, its path and a function returning the
// stacks seen so far.
func committerStacks(t *testing.T) (*Log, string, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var stacks []string
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, Options{Fsync: true, OnCommit: func(time.Duration, int) {
		buf := make([]byte, 64<<10)
		buf = buf[:runtime.Stack(buf, false)]
		mu.Lock()
		defer mu.Unlock()
		stacks = append(stacks, string(buf))
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, path, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), stacks...)
	}
}

// appendAlone appends ev to l; its name in a committer's stack shows the
// commit ran on the appending goroutine.
//
//go:noinline
func appendAlone(l *Log, ev *Event) error { return l.Append(ev) }

// appendConcurrently is appendAlone for TestConcurrentAppendsCommitOnAppenders.
//
//go:noinline
func appendConcurrently(l *Log, ev *Event) error { return l.Append(ev) }

// TestLoneAppendCommitsOnItsGoroutine: with no commit in flight, Append
// encodes, writes and fsyncs its event on the caller's own goroutine (no
// hand-off to another goroutine and back), and the event is sealed and in
// the file when it returns.
func TestLoneAppendCommitsOnItsGoroutine(t *testing.T) {
	t.Parallel()
	l, path, stacks := committerStacks(t)
	for i := range 3 {
		ev := &Event{Agent: "a", Decision: "allow", Reason: fmt.Sprint(i)}
		if err := appendAlone(l, ev); err != nil {
			t.Fatal(err)
		}
		if ev.Hash == "" || ev.Seq != int64(i+1) {
			t.Fatalf("event %d not sealed when Append returned: seq %d hash %q", i, ev.Seq, ev.Hash)
		}
		if l.unsynced() {
			t.Fatalf("event %d written but not synced when Append returned", i)
		}
	}
	got := stacks()
	if len(got) != 3 {
		t.Fatalf("%d commits for 3 lone appends, want 3", len(got))
	}
	for i, s := range got {
		if !strings.Contains(s, "audit.appendAlone") {
			t.Fatalf("commit %d ran on a goroutine other than its appender's:\n%s", i, s)
		}
	}
	if rep, err := VerifyFile(path); err != nil || rep.Events != 3 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// TestConcurrentAppendsCommitOnAppenders: under contention every commit
// is led by one of the appending goroutines (the log has no goroutine of
// its own), every Append returns with its event sealed, and the chain
// holds each writer's events in its order (run under -race).
func TestConcurrentAppendsCommitOnAppenders(t *testing.T) {
	t.Parallel()
	const writers, each = 8, 40
	l, path, stacks := committerStacks(t)
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				ev := &Event{Agent: fmt.Sprint("w", w), Decision: "allow", Reason: fmt.Sprint(i)}
				if err := appendConcurrently(l, ev); err != nil {
					errs <- err
					return
				}
				if ev.Hash == "" {
					errs <- fmt.Errorf("writer %d event %d returned unsealed", w, i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := stacks()
	batches, events := l.Stats()
	if int64(len(got)) != batches || events != writers*each {
		t.Fatalf("%d commits observed, %d batches of %d events; want %d events", len(got), batches, events, writers*each)
	}
	for i, s := range got {
		if !strings.Contains(s, "audit.appendConcurrently") {
			t.Fatalf("commit %d ran on a goroutine that is not an appender:\n%s", i, s)
		}
	}
	checkWriters(t, path, writers, each)
	t.Logf("%d events in %d commits, each led by an appender", events, batches)
}
