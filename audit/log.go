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

// Log appends events to one audit file. It is safe for concurrent use by
// goroutines, and several processes (each with its own Log) may append to
// the same file.
//
// Appends are group-committed (a Batcher): while one goroutine writes a
// batch under the file lock, the others queue; the next batch takes the
// whole queue, re-reads the chain's tail if another process appended, and
// writes every queued event with one write and one fsync. Each Append
// returns only when its own event is written (and synced, with Fsync).
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
	l.batch = NewBatcher(ObserveCommit(l.commit, opts.OnCommit))
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
		_, err = l.writeLocked(size, []*Event{rec})
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

// commit writes one batch under the file lock.
func (l *Log) commit(evs []*Event) ([]error, error) {
	if err := lockFile(l.f); err != nil {
		return nil, fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)
	size, rec, err := l.syncTail()
	if err != nil {
		return nil, err
	}
	if rec != nil {
		if _, err := l.writeLocked(size, []*Event{rec}); err != nil {
			return nil, err
		}
		size = l.size
	}
	return l.writeLocked(size, evs)
}

// writeLocked seals evs onto the head, writes them in one write and syncs
// them; the caller holds the file lock and size is the file's size.
func (l *Log) writeLocked(size int64, evs []*Event) ([]error, error) {
	lines, errs, next := SealBatch(l.head, evs, l.signer, time.Now())
	if len(lines) == 0 {
		return errs, nil
	}
	n := 0
	for _, ln := range lines {
		n += len(ln.Bytes)
	}
	buf := make([]byte, 0, n)
	for _, ln := range lines {
		buf = append(buf, ln.Bytes...)
	}
	if err := l.writeSync(size, buf); err != nil {
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
		l.closeErr = errors.Join(cerr, l.f.Close())
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
		if _, err := l.writeLocked(size, []*Event{rec}); err != nil {
			return err
		}
		size = l.size
	}
	cp, ok, err := l.signer.CloseCheckpoint(l.head, time.Now())
	if err != nil || !ok {
		return err
	}
	if err := l.writeSync(size, cp.Bytes); err != nil {
		return fmt.Errorf("closing checkpoint: %w", err)
	}
	l.size, l.head = size+int64(len(cp.Bytes)), Head{Seq: cp.Event.Seq, Hash: cp.Hash, Sealed: true}
	l.heads.Committed([]Line{cp}, l.head)
	return nil
}

// writeSync appends buf at size and syncs it; on failure it takes back a
// partial write so nothing half-written stays in the chain.
func (l *Log) writeSync(size int64, buf []byte) error {
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
	if l.fsync {
		if err := l.f.Sync(); err != nil {
			l.size = -1
			return fmt.Errorf("sync audit log %s: %w", l.path, err)
		}
	}
	return nil
}
