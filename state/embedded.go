package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	_ "modernc.org/sqlite" // the pure-Go SQLite driver, registered as "sqlite"

	"github.com/toolgate/toolgate/audit"
)

// DBFile is the embedded store's SQLite file inside its directory.
const DBFile = "state.db"

// How the embedded store notices another process's commit: PRAGMA
// data_version, on a connection of its own, changes exactly when some other
// connection committed since it last asked. Asking costs no disk I/O (it
// reads the WAL index in shared memory) but some CPU in the driver, so it
// is asked when inotify reports a write in the directory (then every
// burstEvery for up to burstFor, since the write can precede the commit's
// visibility), and otherwise every safetyPoll as a net. Without inotify it
// is asked every pollEvery. Nothing is asked while nobody waits.
const (
	pollEvery  = 5 * time.Millisecond
	safetyPoll = 100 * time.Millisecond
	burstEvery = time.Millisecond
	burstFor   = 50 * time.Millisecond
)

// Embedded is the one-machine store: SQLite in WAL mode with a busy
// timeout, every write transaction BEGIN IMMEDIATE, so several toolgate
// processes on one machine share it safely.
type Embedded struct {
	*sqlStore
	dir  string
	stop context.CancelFunc
	done chan struct{}
	once sync.Once
	// watching starts the watcher when a first waiter subscribes: its
	// inotify instance costs an exiting process the kernel's fsnotify
	// grace period (12–20 ms), which a process without waiters need not pay.
	watching sync.Once
	started  bool // the watcher was started (guarded by watching)
}

// OpenEmbedded opens (creating if needed, mode 0700/0600) the store in dir
// and brings its schema up to date, one process at a time (lockOpening).
func OpenEmbedded(ctx context.Context, dir string) (*Embedded, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("state: create %s: %w (check gateway.state.path)", dir, err)
	}
	unlock, err := lockOpening(ctx, dir, openLockWait)
	if err != nil {
		return nil, err
	}
	defer unlock()
	path := filepath.Join(dir, DBFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w (check gateway.state.path: the directory must be writable)", path, err)
	}
	f.Close()
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	if err := checkSQLite(ctx, db); err != nil {
		db.Close()
		return nil, openError(path, err)
	}
	d := dialect{name: "sqlite"}
	if err := migrate(ctx, db, d); err != nil {
		db.Close()
		return nil, fmt.Errorf("state: %s: %w", path, err)
	}
	e := &Embedded{sqlStore: newSQLStore(db, d, path), dir: dir, done: make(chan struct{})}
	wctx, cancel := context.WithCancel(context.Background())
	e.stop = cancel
	start := func() {
		e.watching.Do(func() {
			e.started = true
			go e.watch(wctx)
		})
	}
	for _, topic := range []string{topicApprovals, topicTasks, topicJobs} {
		e.hubs[topic].first = start
	}
	return e, nil
}

// openLockFile, beside the database, is what lockOpening locks.
const openLockFile = DBFile + ".lock"

// openLockWait bounds how long OpenEmbedded waits for another process
// opening the same store: an open takes milliseconds, so one that holds
// the lock this long is stuck, and waiting on would hang this process's
// start without saying why.
const openLockWait = 30 * time.Second

// lockOpening takes an exclusive lock on dir's openLockFile, waiting until
// it is granted, and returns its release. OpenEmbedded holds it from
// creating the database through the integrity check and the migration, so
// processes that start together (a harness launches one stdio process per
// surface at once) open a new store one after another. Without it, two of
// them turning a new file to WAL mode at the same moment collided: SQLite
// refuses one of two connections that both hold a shared lock and both
// want the exclusive one at once (SQLITE_BUSY, without waiting for the
// busy timeout, since waiting would deadlock), and that process did not
// start. Once the file is in WAL mode (which persists in the file) the
// busy timeout covers what connections do.
//
// It waits at most wait (and no longer than ctx allows), then names the
// lock file: a process stuck while opening holds it.
func lockOpening(ctx context.Context, dir string, wait time.Duration) (unlock func(), err error) {
	l := flock.New(filepath.Join(dir, openLockFile), flock.SetPermissions(0o600))
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ok, err := l.TryLockContext(wctx, 5*time.Millisecond)
	switch {
	case ok:
		return func() { _ = l.Unlock() }, nil
	case err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
		return nil, fmt.Errorf("state: lock %s: %w (check gateway.state.path: the directory must be writable)", l.Path(), err)
	}
	return nil, fmt.Errorf("state: another process has held %s for %s while opening the store (%v); find it (`fuser %s`) and stop it if it is stuck, then start again", l.Path(), wait, context.Cause(wctx), l.Path())
}

// openError says what a failed integrity check of path means. A database
// another program holds locked past the busy timeout is not damaged, and
// moving it aside would lose the pending approvals and tasks in it, so
// that case says to find the holder instead.
func openError(path string, err error) error {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case sqliteBusy, sqliteLocked:
			return fmt.Errorf("state: %s is locked by another program (%v), past the 10 s wait; it is not damaged: find the program holding it (`fuser %s`), stop it, and start again", path, err, path)
		}
	}
	return fmt.Errorf("state: %s is damaged or not a toolgate state database (%v); move it aside (pending approvals and tasks in it are lost) and start again", path, err)
}

// SQLite's primary result codes for a database another connection holds.
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)

// checkSQLite runs SQLite's quick integrity check.
func checkSQLite(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `PRAGMA quick_check`)
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return err
		}
		if s != "ok" {
			problems = append(problems, s)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// watch wakes this process's subscribers when another process (or
// connection) commits.
func (e *Embedded) watch(ctx context.Context) {
	defer close(e.done)
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	events, stopEvents, ok := fileEvents(e.dir)
	every := pollEvery
	if ok {
		defer stopEvents()
		every = safetyPoll
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	burst := time.NewTimer(time.Hour)
	burst.Stop()
	var burstEnd time.Time
	var last int64 = -1
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-events:
			burstEnd = time.Now().Add(burstFor)
		case <-burst.C:
		}
		if e.hubs[topicApprovals].n()+e.hubs[topicTasks].n()+e.hubs[topicJobs].n() == 0 {
			last = -1 // nobody waits; start afresh when someone does
			continue
		}
		var v int64
		if err := conn.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
			continue
		}
		// The first look after a quiet spell has nothing to compare with:
		// wake anyway, so a commit between a waiter's own check and this
		// look is not missed (the waiter just checks again).
		if v != last {
			for _, h := range e.hubs {
				h.wake()
			}
			burstEnd = time.Time{}
		}
		last = v
		if time.Now().Before(burstEnd) {
			burst.Reset(burstEvery)
		}
	}
}

// OpenAudit opens the JSONL audit log at path (package audit).
func (e *Embedded) OpenAudit(path string, opts audit.Options) (audit.Sink, error) {
	return audit.Open(path, opts)
}

// Dir is the store's directory.
func (e *Embedded) Dir() string { return e.dir }

// Close stops the watcher and closes the database.
func (e *Embedded) Close() error {
	var err error
	e.once.Do(func() {
		e.stop()
		e.watching.Do(func() {}) // no watcher starts after Close
		if e.started {
			<-e.done
		}
		err = e.db.Close()
	})
	return err
}
