package audit

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// ErrDamaged marks a log whose last line fails its hash or is not an event:
// appending would chain new events onto garbage, so Open and Append refuse
// until an operator has looked at the file with `toolgate audit verify`. (A
// line merely torn by a crash is not damage: it is moved aside, see Open.)
var ErrDamaged = errors.New("audit log is damaged")

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit log is closed")

// Options tune how a Log writes.
type Options struct {
	// Fsync makes every Append wait for the line to reach stable storage
	// (gateway.audit.fsync: always). Without it a crash of the machine, not of
	// the process, can lose the most recent events.
	Fsync bool
	// SigningKey, when set, makes the log write a signed checkpoint event
	// every CheckpointEvery events and at Close (gateway.audit.signing_key).
	SigningKey ed25519.PrivateKey
	// CheckpointEvery is the checkpoint interval (default 1,000).
	CheckpointEvery int
	// OnCommit, when set, is told the duration and size of every group
	// commit (the gateway's metrics); it must not block.
	OnCommit func(d time.Duration, events int)
	// OnHead, when set, is told the chain's head (seq, hash): after every
	// commit with anchored false, and with anchored true each time the
	// head is logged for anchoring (see Logger). It must not block.
	OnHead func(head Anchor, anchored bool)
	// Logger, when set, logs the chain's head ("audit chain head", with
	// the SEQ:HASH that `audit verify --head` takes) at open, at each
	// checkpoint, at close and, when no SigningKey makes checkpoints, at
	// most HeadLogEvery after it moved: so an outside system can anchor
	// it and a cut or rewritten tail shows.
	Logger *slog.Logger
	// HeadLogEvery bounds how stale the logged head may get without
	// checkpoints (default DefaultHeadLogEvery).
	HeadLogEvery time.Duration
}

// DeferredSyncWithin bounds how long an event appended with AppendDeferred
// may stay written but not synced (with Fsync) when no other commit syncs
// it first.
const DeferredSyncWithin = 10 * time.Millisecond

// Log appends events to one audit file. It is safe for concurrent use by
// goroutines, and several processes (each with its own Log) may append to
// the same file.
//
// Appends are group-committed (a Batcher): while one goroutine writes a
// batch under the file lock, the others queue; the next batch takes the
// whole queue, re-reads the chain's tail if another process appended, and
// writes every queued event with one write and one fsync. Each Append
// returns only when its own event is written (and synced, with Fsync).
// AppendDeferred returns once its event is written; its fsync is the next
// batch's, or one within DeferredSyncWithin.
type Log struct {
	path   string
	fsync  bool
	signer *Signer
	batch  *Batcher
	heads  *HeadAnnouncer

	closeOnce sync.Once
	closeErr  error

	// Touched only inside a commit (or by Open/Close with none running).
	f    *os.File
	size int64 // file size after this Log's last batch or tail read; -1 unknown
	head Head

	// The deferred fsync (AppendDeferred), under dmu: dirty is set while
	// lines are written but not synced, timer syncs them within
	// DeferredSyncWithin, syncErr is a failed deferred fsync, which the
	// next commit returns (so the audit fails closed), closed stops it.
	dmu     sync.Mutex
	dirty   bool
	timer   *time.Timer
	syncErr error
	closed  bool
}

// Open opens (creating with mode 0600 if needed) the audit log at path and
// checks its last line, so a damaged log stops the gateway at start rather
// than at the first call. The directory must already exist.
//
// A last line torn by a crash (no trailing newline, the line before it
// intact) is moved to path+".torn" and the recovery appended as an event
// (decision "recovered"), so the gateway starts again by itself; any other
// damage is an ErrDamaged error.
func Open(path string, opts Options) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w (check gateway.audit.path: its directory must exist and be writable)", err)
	}
	l := &Log{path: path, fsync: opts.Fsync, signer: NewSigner(opts.SigningKey, opts.CheckpointEvery), f: f, size: -1,
		heads: NewHeadAnnouncer(opts)}
	l.batch = NewDeferringBatcher(ObserveCommit(l.commit, opts.OnCommit), ObserveCommit(l.commitDeferred, opts.OnCommit))
	if err := l.prime(); err != nil {
		f.Close()
		return nil, err
	}
	l.heads.Opened(l.head)
	return l, nil
}

// Path returns the file the log writes to.
func (l *Log) Path() string { return l.path }

// Stats returns how many batches and events this Log has committed; their
// ratio is the group commit's average batch size.
func (l *Log) Stats() (batches, events int64) { return l.batch.Stats() }

// prime reads the chain's tail under the lock, recovering a torn line.
func (l *Log) prime() error {
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)
	size, rec, err := l.syncTail()
	if err != nil {
		return err
	}
	if rec != nil {
		_, err = l.writeLocked(size, []*Event{rec}, true)
	}
	return err
}

// Append writes ev as the next line of the chain. It assigns ev.Seq and
// ev.Prev, fills ev.Time with the current time when zero (and converts it to
// UTC), and sets ev.Hash once the line is written (and synced, with Fsync).
// Any error means the event is not known to be recorded: the caller must
// fail the call it was auditing.
func (l *Log) Append(ev *Event) error {
	if ev == nil {
		return errors.New("audit: Append of a nil event")
	}
	return l.batch.Append(ev)
}

// AppendDeferred is Append for an event that must be in the file, in
// order, when it returns, but whose fsync may come later: with the next
// batch holding an event appended with Append (which syncs the file), or
// within DeferredSyncWithin. A crash of the process loses nothing (the
// line is in the kernel's cache); a crash of the machine can lose such
// events written since the last sync. The gateway appends a call's
// outcome this way, never its decision.
func (l *Log) AppendDeferred(ev *Event) error {
	if ev == nil {
		return errors.New("audit: Append of a nil event")
	}
	return l.batch.AppendDeferred(ev)
}

// commit writes one batch under the file lock, synced (with Fsync).
func (l *Log) commit(evs []*Event) ([]error, error) { return l.commitSync(evs, true) }

// commitDeferred writes a batch of deferred events under the file lock
// and leaves their fsync to the next commit or the deferred sync.
func (l *Log) commitDeferred(evs []*Event) ([]error, error) {
	errs, err := l.commitSync(evs, false)
	if err == nil && l.fsync {
		l.dmu.Lock()
		l.dirty = true
		if l.timer == nil && !l.closed {
			l.timer = time.AfterFunc(DeferredSyncWithin, l.syncDeferred)
		}
		l.dmu.Unlock()
	}
	return errs, err
}

// syncDeferred syncs lines written by deferred batches, unless a commit
// synced them since.
func (l *Log) syncDeferred() {
	l.dmu.Lock()
	defer l.dmu.Unlock()
	l.timer = nil
	if !l.dirty || l.closed {
		return
	}
	l.dirty = false
	if err := l.f.Sync(); err != nil {
		l.syncErr = fmt.Errorf("sync audit log %s (outcome events written before it): %w", l.path, err)
	}
}

// commitSync writes one batch under the file lock; sync says whether it
// is synced before it returns (with Fsync).
func (l *Log) commitSync(evs []*Event, sync bool) ([]error, error) {
	l.dmu.Lock()
	serr := l.syncErr
	l.syncErr = nil
	l.dmu.Unlock()
	if serr != nil {
		return nil, serr
	}
	if err := lockFile(l.f); err != nil {
		return nil, fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)
	size, rec, err := l.syncTail()
	if err != nil {
		return nil, err
	}
	if rec != nil {
		if _, err := l.writeLocked(size, []*Event{rec}, true); err != nil {
			return nil, err
		}
		size = l.size
	}
	return l.writeLocked(size, evs, sync)
}

// writeLocked seals evs onto the head, writes them in one write and syncs
// them (when sync); the caller holds the file lock and size is the file's
// size.
func (l *Log) writeLocked(size int64, evs []*Event, sync bool) ([]error, error) {
	lines, errs, next := SealBatch(l.head, evs, l.signer, time.Now())
	if len(lines) == 0 {
		return errs, nil
	}
	buf := lines[0].Bytes // a lone line is written as it is
	if len(lines) > 1 {
		n := 0
		for _, ln := range lines {
			n += len(ln.Bytes)
		}
		buf = make([]byte, 0, n)
		for _, ln := range lines {
			buf = append(buf, ln.Bytes...)
		}
	}
	n := len(buf)
	if err := l.writeSync(size, buf, sync); err != nil {
		return nil, err
	}
	l.size, l.head = size+int64(n), next
	for _, ln := range lines {
		ln.Event.Hash = ln.Hash
	}
	l.heads.Committed(lines, next)
	return errs, nil
}

// Close waits for appends in progress, writes the closing checkpoint when
// signing, and releases the file. Appends after Close return ErrClosed.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		l.batch.Close()
		cerr := l.closeCheckpoint()
		l.heads.Close()
		l.closeErr = errors.Join(cerr, l.stopDeferred(), l.f.Close())
	})
	return l.closeErr
}

// closeCheckpoint signs the chain's tail unless it is one already.
func (l *Log) closeCheckpoint() error {
	if l.signer == nil {
		return nil
	}
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)
	size, rec, err := l.syncTail()
	if err != nil {
		return err
	}
	if rec != nil {
		if _, err := l.writeLocked(size, []*Event{rec}, true); err != nil {
			return err
		}
		size = l.size
	}
	cp, ok, err := l.signer.CloseCheckpoint(l.head, time.Now())
	if err != nil || !ok {
		return err
	}
	if err := l.writeSync(size, cp.Bytes, true); err != nil {
		return fmt.Errorf("closing checkpoint: %w", err)
	}
	l.size, l.head = size+int64(len(cp.Bytes)), Head{Seq: cp.Event.Seq, Hash: cp.Hash, Sealed: true}
	l.heads.Committed([]Line{cp}, l.head)
	return nil
}

// stopDeferred ends the deferred sync at Close, syncing what is still
// unsynced.
func (l *Log) stopDeferred() error {
	l.dmu.Lock()
	defer l.dmu.Unlock()
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	err := l.syncErr
	if l.dirty {
		l.dirty = false
		if serr := l.f.Sync(); serr != nil {
			err = errors.Join(err, fmt.Errorf("sync audit log %s: %w", l.path, serr))
		}
	}
	return err
}

// writeSync appends buf at size and syncs it (when sync, with Fsync); on
// failure it takes back a partial write so nothing half-written stays in
// the chain. A sync covers every line before buf, deferred ones too.
func (l *Log) writeSync(size int64, buf []byte, sync bool) error {
	wn, err := l.f.Write(buf)
	if err != nil {
		l.size = -1
		if wn > 0 {
			// If this fails too, the next batch finds a torn tail and
			// moves it aside.
			_ = l.f.Truncate(size)
		}
		return fmt.Errorf("write audit log %s: %w", l.path, err)
	}
	if l.fsync && sync {
		l.dmu.Lock()
		l.dirty = false
		l.dmu.Unlock()
		if err := l.f.Sync(); err != nil {
			l.size = -1
			return fmt.Errorf("sync audit log %s: %w", l.path, err)
		}
	}
	return nil
}
