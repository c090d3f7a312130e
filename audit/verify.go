package audit

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Report summarises a log that verified.
type Report struct {
	// Events is the number of events in the chain.
	Events int
	// LastSeq is the seq of the last event (0 for an empty log).
	LastSeq int64
	// LastHash is the hash of the last event; recording it elsewhere lets a
	// later check notice events removed from the end, which a chain alone
	// cannot show.
	LastHash string
}

// Problem names what is wrong with the first bad line of a log.
type Problem string

// The problems Verify distinguishes.
const (
	// ProblemTruncated: the last line has no trailing newline, as a crash
	// mid-append leaves it; everything before it verifies.
	ProblemTruncated Problem = "truncated"
	// ProblemMalformed: the line is not a JSON audit event with a hash field.
	ProblemMalformed Problem = "malformed"
	// ProblemEdited: the line's bytes no longer match its hash.
	ProblemEdited Problem = "edited"
	// ProblemMissing: the expected seq is absent from the rest of the file.
	ProblemMissing Problem = "missing"
	// ProblemReordered: the expected seq appears later, or a seq repeats.
	ProblemReordered Problem = "reordered"
	// ProblemPrevMismatch: the line hashes correctly but does not chain to
	// the line before it (a line was rewritten with a recomputed hash).
	ProblemPrevMismatch Problem = "prev mismatch"
)

// VerifyError locates the first line that breaks the chain.
type VerifyError struct {
	// Line is the 1-based line number in the file.
	Line int
	// Seq is the seq that belongs at Line, i.e. the first bad seq.
	Seq int64
	// Offset is the byte offset at which Line starts: truncating the file
	// there removes a partial line left by a crash.
	Offset int64
	// Problem classifies what is wrong.
	Problem Problem
	// Detail explains it for people.
	Detail string
}

// Error names the line, the seq that belongs there and the problem; a
// truncated last line gets the plain-language crash message instead.
func (e *VerifyError) Error() string {
	if e.Problem == ProblemTruncated {
		return e.Detail
	}
	return fmt.Sprintf("line %d (seq %d): %s: %s", e.Line, e.Seq, e.Problem, e.Detail)
}

// Verify reads a whole log and checks that every line is an event whose hash
// matches its bytes, that seq counts up by one from 1, and that each prev is
// the previous line's hash. The error, when the chain is broken, is a
// *VerifyError naming the first bad line; other errors are read failures.
// Removing events from the end cannot be seen in the chain itself: compare
// Report.LastHash with a copy kept elsewhere for that.
func Verify(r io.Reader) (Report, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var rep Report
	prev := GenesisPrev
	var off int64
	for lineNo := 1; ; lineNo++ {
		start := off
		raw, err := br.ReadBytes('\n')
		off += int64(len(raw))
		if err != nil && err != io.EOF {
			return rep, fmt.Errorf("read audit log at line %d: %w", lineNo, err)
		}
		if len(raw) == 0 {
			return rep, nil
		}
		want := rep.LastSeq + 1
		if raw[len(raw)-1] != '\n' {
			return rep, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemTruncated, Detail: fmt.Sprintf(
				"line %d is truncated (no trailing newline / incomplete JSON): the writer probably crashed mid-append; the %d events before it verify", lineNo, lineNo-1)}
		}
		line := raw[:len(raw)-1]
		stored, ok, match := lineHash(line)
		var ev struct {
			Seq  *int64  `json:"seq"`
			Prev *string `json:"prev"`
		}
		if !ok || json.Unmarshal(line, &ev) != nil || ev.Seq == nil || ev.Prev == nil {
			return rep, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemMalformed,
				Detail: "not a JSON audit event ending in its hash field (the line was edited or corrupted)"}
		}
		if !match {
			return rep, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemEdited,
				Detail: fmt.Sprintf("the line (claiming seq %d) does not match its hash: its bytes were changed after it was written", *ev.Seq)}
		}
		if *ev.Seq != want {
			ve := seqError(br, lineNo, want, *ev.Seq)
			ve.Offset = start
			return rep, ve
		}
		if *ev.Prev != prev {
			return rep, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemPrevMismatch,
				Detail: fmt.Sprintf("prev is %q but the previous line's hash is %q: the line was rewritten or a line before it replaced", short(*ev.Prev), short(prev))}
		}
		prev = stored
		rep.Events++
		rep.LastSeq = want
		rep.LastHash = stored
	}
}

// VerifyFile verifies the log at path as it stands at the moment of the
// call. It takes the writers' lock only long enough to read the file's size,
// so a gateway appending meanwhile is not held up and a line being written
// is not mistaken for one truncated by a crash.
func VerifyFile(path string) (Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return Report{}, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	size, err := stableSize(f)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", path, err)
	}
	return Verify(io.NewSectionReader(f, 0, size))
}

// seqError classifies a line holding seq got where want belongs: if want
// shows up further on, lines were reordered; otherwise it was removed.
func seqError(br *bufio.Reader, lineNo int, want, got int64) *VerifyError {
	if got < want {
		return &VerifyError{Line: lineNo, Seq: want, Problem: ProblemReordered,
			Detail: fmt.Sprintf("holds seq %d again after seq %d: lines were reordered or duplicated", got, want-1)}
	}
	laterLine := lineNo
	for {
		raw, err := br.ReadBytes('\n')
		if len(raw) > 0 {
			laterLine++
			var ev struct {
				Seq int64 `json:"seq"`
			}
			if json.Unmarshal(bytes.TrimSpace(raw), &ev) == nil && ev.Seq == want {
				return &VerifyError{Line: lineNo, Seq: want, Problem: ProblemReordered,
					Detail: fmt.Sprintf("holds seq %d, but seq %d is on line %d: lines were reordered", got, want, laterLine)}
			}
		}
		if err != nil {
			break
		}
	}
	detail := fmt.Sprintf("seq %d is missing (the line holds seq %d): events were removed", want, got)
	if got > want+1 {
		detail = fmt.Sprintf("seqs %d to %d are missing (the line holds seq %d): events were removed", want, got-1, got)
	}
	return &VerifyError{Line: lineNo, Seq: want, Problem: ProblemMissing, Detail: detail}
}

// short abbreviates a hash for messages.
func short(h string) string {
	if len(h) > 16 {
		return h[:16] + "…"
	}
	return h
}

// AsVerifyError returns the *VerifyError inside err, if any.
func AsVerifyError(err error) (*VerifyError, bool) {
	var ve *VerifyError
	ok := errors.As(err, &ve)
	return ve, ok
}
