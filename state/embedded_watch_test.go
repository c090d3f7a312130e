package state

import (
	"context"
	"testing"
	"time"
)

// TestEmbeddedWatcherStartsWithFirstWaiter: a store nobody waits on opens
// no watcher (so an exiting CLI or stdio instance does not wait out the
// kernel's inotify grace period); the first waiter starts it, and a commit
// of another connection then wakes that waiter.
func TestEmbeddedWatcherStartsWithFirstWaiter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	a, err := OpenEmbedded(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenEmbedded(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if a.started || b.started {
		t.Fatal("a store started its watcher before anyone waited")
	}
	if _, err := a.CreateTask(ctx, Task{Agent: "reader", Surface: "git", Action: "x"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if a.started {
		t.Fatal("a write started the watcher")
	}
	changed, stop := b.WatchTasks()
	defer stop()
	if !b.started {
		t.Fatal("the first waiter did not start the watcher")
	}
	// The watcher's first look wakes its waiters whatever it sees; drain
	// that, then a commit of the other store must wake again.
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no first wake-up")
	}
	if _, err := a.CreateTask(ctx, Task{Agent: "reader", Surface: "git", Action: "y"}, time.Hour); err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no wake-up after another store's commit")
	}
	if err := a.Close(); err != nil {
		t.Fatalf("closing a store whose watcher never started: %v", err)
	}
	if _, stop := a.WatchApprovals(); a.started {
		stop()
		t.Fatal("a closed store started a watcher")
	} else {
		stop()
	}
}
