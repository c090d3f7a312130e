package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// ErrDamaged marks a log whose last line is incomplete or fails its hash:
// appending would chain new events onto garbage, so Append refuses until an
// operator has looked at the file with `toolgate audit verify`.
var ErrDamaged = errors.New("audit log is damaged")

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("audit log is closed")

// Options tune how a Log writes.
type Options struct {
	// Fsync makes every Append wait for the line to reach stable storage
	// (gateway.audit.fsync: always). Without it a crash of the machine, not of
	// the process, can lose the most recent events.
	Fsync bool
}

// Log appends events to one audit file. It is safe for concurrent use by
// goroutines, and several processes (each with its own Log) may append to
// the same file: every append holds an exclusive lock on the file while it
// reads the chain's tail, writes its line and syncs.
type Log struct {
	path  string
	fsync bool

	mu   sync.Mutex
	f    *os.File
	size int64 // file size after this Log's last append or tail read; -1 unknown
	seq  int64 // seq of the last line when the file had size bytes
	hash string
}

// Open opens (creating with mode 0600 if needed) the audit log at path and
// checks its last line, so a damaged log stops the gateway at start rather
// than at the first call. The directory must already exist.
func Open(path string, opts Options) (*Log, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w (check gateway.audit.path: its directory must exist and be writable)", err)
	}
	l := &Log{path: path, fsync: opts.Fsync, f: f, size: -1}
	if err := l.prime(); err != nil {
		f.Close()
		return nil, err
	}
	return l, nil
}

// Path returns the file the log writes to.
func (l *Log) Path() string { return l.path }

// prime reads the chain's tail under the lock.
func (l *Log) prime() error {
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)
	_, err := l.syncTail()
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
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return ErrClosed
	}
	if err := lockFile(l.f); err != nil {
		return fmt.Errorf("lock audit log %s: %w", l.path, err)
	}
	defer unlockFile(l.f)

	size, err := l.syncTail()
	if err != nil {
		return err
	}
	ev.Seq = l.seq + 1
	ev.Prev = l.hash
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	ev.Time = ev.Time.UTC()
	line, hash, err := encodeLine(ev)
	if err != nil {
		return err
	}
	n, err := l.f.Write(line)
	if err != nil {
		l.size = -1
		if n > 0 {
			// Take back the partial line so the chain stays appendable; if
			// that fails too, the next Append reports the damage.
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
	l.size, l.seq, l.hash = size+int64(n), ev.Seq, hash
	ev.Hash = hash
	return nil
}

// syncTail makes l.seq and l.hash describe the file's last line, re-reading
// it only when the file's size differs from what this Log last saw (another
// process appended). The caller holds the file lock. It returns the size.
func (l *Log) syncTail() (int64, error) {
	st, err := l.f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat audit log %s: %w", l.path, err)
	}
	size := st.Size()
	if size == l.size {
		return size, nil
	}
	seq, hash, err := readLast(l.f, size)
	if err != nil {
		l.size = -1
		return 0, fmt.Errorf("%w: %s: %v; run `toolgate audit verify %s` to see what is wrong (a line cut short by a crash must be removed by hand before the gateway can append again)", ErrDamaged, l.path, err, l.path)
	}
	l.size, l.seq, l.hash = size, seq, hash
	return size, nil
}

// tailChunk is how much readLast reads at a time, backwards from the end.
const tailChunk = 4096

// readLast returns the seq and hash of the last line of a file of the given
// size, reading backwards from the end so the cost does not grow with the
// log. An empty file is the start of a chain.
func readLast(r io.ReaderAt, size int64) (int64, string, error) {
	if size == 0 {
		return 0, GenesisPrev, nil
	}
	var last [1]byte
	if _, err := r.ReadAt(last[:], size-1); err != nil {
		return 0, "", fmt.Errorf("read last byte: %w", err)
	}
	if last[0] != '\n' {
		return 0, "", errors.New("the last line is truncated (no trailing newline): a writer probably crashed mid-append")
	}
	end := size - 1
	var line []byte
	for start := end; ; {
		from := max(start-tailChunk, 0)
		chunk := make([]byte, start-from)
		if _, err := r.ReadAt(chunk, from); err != nil {
			return 0, "", fmt.Errorf("read last line: %w", err)
		}
		line = append(chunk, line...)
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			line = line[i+1:]
			break
		}
		if from == 0 {
			break
		}
		start = from
	}
	stored, ok, match := lineHash(line)
	if !ok {
		return 0, "", errors.New("the last line has no valid hash field")
	}
	if !match {
		return 0, "", errors.New("the last line does not match its hash (it was edited)")
	}
	var head struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(line, &head); err != nil || head.Seq < 1 {
		return 0, "", errors.New("the last line is not a valid audit event")
	}
	return head.Seq, stored, nil
}

// Close releases the file. Appends after Close return ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
