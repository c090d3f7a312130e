package audit

import (
	"crypto/ed25519"
	"errors"
	"fmt"
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
}

// Log appends events to one audit file. It is safe for concurrent use by
// goroutines, and several processes (each with its own Log) may append to
// the same file.
//
// Appends are group-committed: while one goroutine (the leader) writes a
// batch under the file lock, the others queue; the next leader takes the
// whole queue, re-reads the chain's tail if another process appended, and
// writes every queued event with one write and one fsync. Each Append
// returns only when its own event is written (and synced, with Fsync).
type Log struct {
	path   string
	fsync  bool
	signer *Signer

	mu      sync.Mutex
	idle    *sync.Cond // signalled when a leader steps down
	queue   []*pending
	leading bool
	closed  bool

	// Touched only by the leader (or Open/Close with no leader).
	f    *os.File
	size int64 // file size after this Log's last batch or tail read; -1 unknown
	head Head
	// Batches and Events count commits, for benchmarks and metrics.
	batches, events int64
}

type pending struct {
	ev   *Event
	err  error
	done chan struct{}
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
	l := &Log{path: path, fsync: opts.Fsync, signer: NewSigner(opts.SigningKey, opts.CheckpointEvery), f: f, size: -1}
	l.idle = sync.NewCond(&l.mu)
	if err := l.prime(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Path returns the file the log writes to.
func (l *Log) Path() string { return l.path }

// Stats returns how many batches and events this Log has committed; their
// ratio is the group commit's average batch size.
func (l *Log) Stats() (batches, events int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.leading {
		l.idle.Wait()
	}
	return l.batches, l.events
}

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
		return l.writeLocked(size, []*pending{{ev: rec}})
	}
	return nil
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
	p := &pending{ev: ev, done: make(chan struct{})}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.queue = append(l.queue, p)
	if l.leading {
		l.mu.Unlock()
		<-p.done
		return p.err
	}
	l.leading = true
	for len(l.queue) > 0 {
		batch := l.queue
		l.queue = nil
		l.mu.Unlock()
		l.commit(batch)
		l.mu.Lock()
	}
	l.leading = false
	l.idle.Broadcast()
	l.mu.Unlock()
	<-p.done
	return p.err
}

// commit writes one batch under the file lock and wakes its waiters.
func (l *Log) commit(batch []*pending) {
	err := l.commitLocked(batch)
	for _, p := range batch {
		if p.err == nil {
			p.err = err
		}
		if p.done != nil {
			close(p.done)
		}
	}
}

func (l *Log) commitLocked(batch []*pending) error {
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)
	size, rec, err := l.syncTail()
	if err != nil {
		return err
	}
	if rec != nil {
		batch = append([]*pending{{ev: rec}}, batch...)
	}
	return l.writeLocked(size, batch)
}

// writeLocked seals batch onto the head, writes it in one write and syncs
// it; the caller holds the file lock and size is the file's size.
func (l *Log) writeLocked(size int64, batch []*pending) error {
	evs := make([]*Event, len(batch))
	for i, p := range batch {
		evs[i] = p.ev
	}
	lines, errs, next := SealBatch(l.head, evs, l.signer, time.Now())
	for i, p := range batch {
		p.err = errs[i]
	}
	if len(lines) == 0 {
		return nil
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
		return err
	}
	l.size, l.head = size+int64(n), next
	l.batches++
	l.events += int64(len(lines))
	for _, ln := range lines {
		ln.Event.Hash = ln.Hash
	}
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

// Close waits for appends in progress, writes the closing checkpoint when
// signing, and releases the file. Appends after Close return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	for l.leading {
		l.idle.Wait()
	}
	l.mu.Unlock()
	cerr := l.closeCheckpoint()
	err := l.f.Close()
	return errors.Join(cerr, err)
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
		if err := l.writeLocked(size, []*pending{{ev: rec}}); err != nil {
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
	return nil
}
