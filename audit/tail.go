package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Filter selects events; an empty field matches everything.
type Filter struct {
	// Agent keeps events of this agent only.
	Agent string
	// Decision keeps events with this decision only (allow, deny, …).
	Decision string
}

// Match reports whether ev passes the filter.
func (f Filter) Match(ev *Event) bool {
	return (f.Agent == "" || ev.Agent == f.Agent) && (f.Decision == "" || ev.Decision == f.Decision)
}

// TailOptions say which events Tail emits and whether it keeps waiting.
type TailOptions struct {
	// Filter selects the events to emit.
	Filter Filter
	// Last limits the events already in the file to the last N that match;
	// 0 emits all of them.
	Last int
	// Follow keeps emitting events appended later, until ctx is cancelled.
	Follow bool
	// Poll is how often Follow checks the file for growth (default 250ms).
	Poll time.Duration
}

// Record is one event as Tail found it.
type Record struct {
	// Line is the 1-based line number in the file.
	Line int
	// Raw is the line exactly as stored, without its newline.
	Raw []byte
	// Event is the decoded line.
	Event Event
}

// defaultPoll is how often Follow looks for new data when Poll is zero.
const defaultPoll = 250 * time.Millisecond

// Tail calls emit for the events of the log at path that match opts.Filter:
// the last opts.Last of those already written (all if 0), then, with Follow,
// each new one as it is appended, until ctx is cancelled (which returns nil).
// Tail reads lines and does not check the chain; use Verify for that. An
// emit error stops Tail and is returned.
func Tail(ctx context.Context, path string, opts TailOptions, emit func(Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	size, err := stableSize(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	lr := &lineReader{f: f}

	var ring []Record
	if err := lr.each(size, func(rec Record) error {
		if !opts.Filter.Match(&rec.Event) {
			return nil
		}
		ring = append(ring, rec)
		if opts.Last > 0 && len(ring) >= 2*opts.Last {
			ring = append(ring[:0], ring[len(ring)-opts.Last:]...)
		}
		return nil
	}); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if opts.Last > 0 && len(ring) > opts.Last {
		ring = ring[len(ring)-opts.Last:]
	}
	for _, rec := range ring {
		if err := emit(rec); err != nil {
			return err
		}
	}
	if !opts.Follow {
		if len(lr.pending) > 0 {
			return fmt.Errorf("%s: line %d is truncated (no trailing newline): a writer crashed mid-append or is writing now; run `toolgate audit verify %s`", path, lr.line+1, path)
		}
		return nil
	}

	poll := opts.Poll
	if poll <= 0 {
		poll = defaultPoll
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		st, err := f.Stat()
		if err != nil {
			return fmt.Errorf("stat audit log: %w", err)
		}
		if st.Size() < lr.off {
			return fmt.Errorf("%s shrank from %d to %d bytes: the log was truncated or replaced; start tail again", path, lr.off, st.Size())
		}
		if st.Size() == lr.off {
			continue
		}
		if err := lr.each(st.Size(), func(rec Record) error {
			if !opts.Filter.Match(&rec.Event) {
				return nil
			}
			return emit(rec)
		}); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

// lineReader reads complete lines from a growing file, keeping a trailing
// partial line until the rest of it arrives.
type lineReader struct {
	f       *os.File
	off     int64 // bytes consumed from f, including pending
	line    int   // complete lines decoded so far
	pending []byte
	buf     [32 * 1024]byte
}

// each decodes every complete line from the current offset up to limit, or
// to the end of the file if it is shorter.
func (lr *lineReader) each(limit int64, fn func(Record) error) error {
	for lr.off < limit {
		n, err := lr.f.ReadAt(lr.buf[:min(int64(len(lr.buf)), limit-lr.off)], lr.off)
		lr.off += int64(n)
		data := lr.buf[:n]
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				lr.pending = append(lr.pending, data...)
				break
			}
			raw := append(lr.pending, data[:i]...)
			lr.pending = nil
			data = data[i+1:]
			lr.line++
			rec := Record{Line: lr.line, Raw: raw}
			if jerr := json.Unmarshal(raw, &rec.Event); jerr != nil {
				return fmt.Errorf("line %d is not an audit event (%v); run `toolgate audit verify`", lr.line, jerr)
			}
			if ferr := fn(rec); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// stableSize returns the file's size taken under the writers' lock, so that
// it falls between two whole lines even while another process appends.
func stableSize(f *os.File) (int64, error) {
	if err := lockFile(f); err != nil {
		return 0, fmt.Errorf("lock audit log: %w", err)
	}
	defer unlockFile(f)
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("stat audit log: %w", err)
	}
	return st.Size(), nil
}
