package state

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

// TestOpenLockWaitBounded: a process stuck while opening the store (it
// holds the open lock) makes the next one give up, naming the lock file,
// instead of hanging its start; a cancelled start gives up at once.
func TestOpenLockWaitBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	held := flock.New(filepath.Join(dir, openLockFile))
	if err := held.Lock(); err != nil {
		t.Fatal(err)
	}
	defer held.Unlock()

	start := time.Now()
	_, err := lockOpening(context.Background(), dir, 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), held.Path()) || !strings.Contains(err.Error(), "another process has held") {
		t.Fatalf("lock held elsewhere: %v, want an error naming %s", err, held.Path())
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("gave up after %s, want about the 50 ms asked", waited)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := OpenEmbedded(ctx, dir); err == nil || !strings.Contains(err.Error(), held.Path()) {
		t.Fatalf("cancelled open: %v, want an error naming %s", err, held.Path())
	}

	held.Unlock()
	unlock, err := lockOpening(context.Background(), dir, time.Second)
	if err != nil {
		t.Fatalf("lock free again: %v", err)
	}
	unlock()
}

// TestOpenErrorLockedIsNotDamaged: a database another program holds
// locked is reported as locked, with no advice to move it aside (which
// would lose its pending approvals); anything else is still reported as
// damaged. The busy error is SQLite's own, from a real second connection.
func TestOpenErrorLockedIsNotDamaged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), DBFile)
	holder, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	holder.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE TABLE t(x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	busy := checkSQLite(ctx, other)
	if busy == nil {
		t.Fatal("quick_check under another connection's exclusive lock succeeded")
	}
	msg := openError(path, busy).Error()
	if !strings.Contains(msg, "locked by another program") || strings.Contains(msg, "move it aside") || !strings.Contains(msg, path) {
		t.Errorf("busy database reported as %q", msg)
	}
	if msg := openError(path, errors.New("file is not a database")).Error(); !strings.Contains(msg, "move it aside") {
		t.Errorf("damaged database reported as %q", msg)
	}
}
