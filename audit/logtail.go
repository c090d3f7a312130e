package audit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
)

// errTorn marks a last line without its newline: a writer died mid-write.
var errTorn = errors.New("the last line is truncated (no trailing newline): a writer probably crashed mid-append")

// syncTail makes l.head describe the file's last line, re-reading it only
// when the file's size differs from what this Log last saw (another process
// appended). A torn last line is moved aside first; rec is then the event
// recording that, to be written before anything else. The caller holds the
// file lock. It returns the file's size.
func (l *Log) syncTail() (size int64, rec *Event, err error) {
	// The end's offset is the size (no FileInfo allocated per commit, as
	// Stat would).
	size, err = l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, nil, fmt.Errorf("find the end of audit log %s: %w", l.path, err)
	}
	if size == l.size {
		return size, nil, nil
	}
	head, err := readLast(l.f, size)
	if errors.Is(err, errTorn) {
		size, head, rec, err = l.moveTorn(size)
	}
	if err != nil {
		l.size = -1
		return 0, nil, fmt.Errorf("%w: %s: %v; run `toolgate audit verify %s` to see what is wrong (the gateway appends only to an intact chain)", ErrDamaged, l.path, err, l.path)
	}
	l.size, l.head = size, head
	return size, rec, nil
}

// TornSuffix is appended to the log's path to name the file that receives
// lines torn by a crash.
const TornSuffix = ".torn"

// moveTorn moves the partial last line of a file of the given size to the
// .torn file (appending, synced), cuts the log back to its last whole line
// (synced) and returns the event that records the recovery. It refuses when
// the line before the torn one is not intact: that is damage, not a crash.
func (l *Log) moveTorn(size int64) (int64, Head, *Event, error) {
	cut, err := lastNewline(l.f, size)
	if err != nil {
		return 0, Head{}, nil, err
	}
	head, err := readLast(l.f, cut)
	if err != nil {
		return 0, Head{}, nil, fmt.Errorf("a torn last line follows a damaged one: %w", err)
	}
	frag := make([]byte, size-cut)
	if _, err := l.f.ReadAt(frag, cut); err != nil {
		return 0, Head{}, nil, fmt.Errorf("read torn line: %w", err)
	}
	tornPath := l.path + TornSuffix
	tf, err := os.OpenFile(tornPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, Head{}, nil, fmt.Errorf("keep the torn line: %w", err)
	}
	_, werr := tf.Write(append(frag, '\n'))
	serr := tf.Sync()
	cerr := tf.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return 0, Head{}, nil, fmt.Errorf("keep the torn line in %s: %w", tornPath, err)
	}
	if err := l.f.Truncate(cut); err != nil {
		return 0, Head{}, nil, fmt.Errorf("cut the torn line: %w", err)
	}
	if err := l.f.Sync(); err != nil {
		return 0, Head{}, nil, fmt.Errorf("sync after cutting the torn line: %w", err)
	}
	rec := &Event{
		Action: ActionRecover, Decision: DecisionRecovered,
		Reason: fmt.Sprintf("a line torn by a crash (%d bytes after seq %d) was moved to %s", len(frag), head.Seq, tornPath),
	}
	return cut, head, rec, nil
}

// lastNewline returns the offset just past the last '\n' before size (0 if
// there is none).
func lastNewline(r io.ReaderAt, size int64) (int64, error) {
	for end := size; end > 0; {
		from := max(end-tailChunk, 0)
		chunk := make([]byte, end-from)
		if _, err := r.ReadAt(chunk, from); err != nil {
			return 0, fmt.Errorf("read audit log: %w", err)
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return from + int64(i) + 1, nil
		}
		end = from
	}
	return 0, nil
}

// tailChunk is how much readLast reads at a time, backwards from the end.
const tailChunk = 4096

// readLast returns the head (seq, hash, checkpoint or not) of the last line
// of a file of the given size, reading backwards from the end so the cost
// does not grow with the log. An empty file is the start of a chain.
func readLast(r io.ReaderAt, size int64) (Head, error) {
	if size == 0 {
		return Head{Hash: GenesisPrev}, nil
	}
	var last [1]byte
	if _, err := r.ReadAt(last[:], size-1); err != nil {
		return Head{}, fmt.Errorf("read last byte: %w", err)
	}
	if last[0] != '\n' {
		return Head{}, errTorn
	}
	start, err := lastNewline(r, size-1)
	if err != nil {
		return Head{}, err
	}
	line := make([]byte, size-1-start)
	if _, err := r.ReadAt(line, start); err != nil {
		return Head{}, fmt.Errorf("read last line: %w", err)
	}
	stored, ok, match := lineHash(line)
	if !ok {
		return Head{}, errors.New("the last line has no valid hash field")
	}
	if !match {
		return Head{}, errors.New("the last line does not match its hash (it was edited)")
	}
	var ev struct {
		Seq        int64           `json:"seq"`
		Decision   string          `json:"decision"`
		Checkpoint json.RawMessage `json:"checkpoint"`
	}
	if err := json.Unmarshal(line, &ev); err != nil || ev.Seq < 1 {
		return Head{}, errors.New("the last line is not a valid audit event")
	}
	return Head{Seq: ev.Seq, Hash: stored, Sealed: ev.Decision == DecisionCheckpoint && len(ev.Checkpoint) > 0}, nil
}

// String describes a head for messages.
func (h Head) String() string {
	return "seq " + strconv.FormatInt(h.Seq, 10) + " " + short(h.Hash)
}
