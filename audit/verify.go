package audit

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
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
	// Checkpoints counts the checkpoint events; SignedSeq is the last seq
	// covered by a checkpoint (signed by VerifyOptions.PublicKey when one
	// was given), and UnsignedTail the events after it.
	Checkpoints  int
	SignedSeq    int64
	UnsignedTail int
	// PreviousKeyCheckpoints counts the checkpoints signed by one of
	// VerifyOptions.PreviousKeys (a key rotated out); they are not counted
	// in Checkpoints and cover nothing.
	PreviousKeyCheckpoints int
	// Anchored is set when VerifyOptions.Head was given and the chain holds
	// it; AfterAnchor counts the events after it, which it does not cover.
	Anchored    bool
	AfterAnchor int
	// Unfinished lists allowed decisions that no outcome event (Of) follows:
	// the gateway stopped during the call, or the call is still running.
	// A finding for people to look at, not a broken chain.
	Unfinished []Unfinished
}

// Unfinished is a write-ahead decision without its outcome.
type Unfinished struct {
	Seq    int64  `json:"seq"`
	Agent  string `json:"agent"`
	Action string `json:"action"`
	Time   string `json:"time"`
}

// VerifyOptions add checks to Verify.
type VerifyOptions struct {
	// PublicKey, when set, requires signed checkpoints by this key: every
	// checkpoint must verify under it, at least one must exist, and (unless
	// AllowUnsignedTail) the log must end with one, which is how a
	// truncated log or one rewritten from scratch is detected.
	PublicKey ed25519.PublicKey
	// AllowUnsignedTail accepts events after the last checkpoint, as a log
	// that a gateway is appending to right now has.
	AllowUnsignedTail bool
	// Head, when set, is an anchored head kept outside the chain (logged
	// or scraped from /metrics): the chain must still hold that event with
	// that hash. It catches, without any key, a tail cut before the
	// anchored event and a chain rewritten from scratch (or from before
	// it). Events after the anchor are not covered by it.
	Head *Anchor
	// PreviousKeys are signing keys rotated out: a checkpoint they signed
	// is checked and accepted, but only checkpoints by PublicKey count as
	// signing the chain — so the chain must still hold one by PublicKey and
	// end with one, and a holder of an old key cannot rewrite the chain or
	// extend it unnoticed.
	PreviousKeys []ed25519.PublicKey
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
	// ProblemSignature: a checkpoint does not verify under the public key,
	// or does not sign the line before it.
	ProblemSignature Problem = "bad checkpoint"
	// ProblemUnsigned: with a public key, no checkpoint covers the end of
	// the log (truncated, rewritten from scratch, or never signed).
	ProblemUnsigned Problem = "unsigned"
	// ProblemAnchor: the chain does not hold the anchored head
	// (VerifyOptions.Head): it ends before it (cut) or holds another event
	// at its seq (rewritten).
	ProblemAnchor Problem = "anchored head"
)

// ExpectsOutcome says whether ev is a write-ahead decision that an outcome
// event (with Of = ev.Seq) must follow: an allow decision that carries no
// execution result itself. Outcome events carry Of; single-event records of
// older gateways carry their exit, duration, output size or error.
func ExpectsOutcome(ev *Event) bool {
	return ev.Decision == "allow" && ev.Of == nil && ev.Exit == nil && ev.DurationMS == nil &&
		ev.OutputBytes == nil && ev.Error == ""
}

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
	return VerifyWith(r, VerifyOptions{})
}

// VerifyWith is Verify with the extra checks of opts.
func VerifyWith(r io.Reader, opts VerifyOptions) (Report, error) {
	rep, lineNo, err := verifyChain(r, opts)
	if err != nil || opts.PublicKey == nil {
		return rep, err
	}
	if rep.Checkpoints == 0 {
		return rep, &VerifyError{Line: lineNo, Seq: rep.LastSeq + 1, Problem: ProblemUnsigned, Detail: fmt.Sprintf(
			"no checkpoint signed by %s in %d events: the log was truncated, rewritten from scratch, or written without gateway.audit.signing_key", KeyID(opts.PublicKey), rep.Events)}
	}
	if rep.UnsignedTail > 0 && !opts.AllowUnsignedTail {
		return rep, &VerifyError{Line: lineNo, Seq: rep.SignedSeq + 2, Problem: ProblemUnsigned, Detail: fmt.Sprintf(
			"the last %d events (after the checkpoint of seq %d) are not signed: lines after a checkpoint were dropped and others appended, or a gateway is appending now or stopped without closing (pass --allow-unsigned-tail for a live log)", rep.UnsignedTail, rep.SignedSeq)}
	}
	return rep, nil
}

// verifyLine is what verifyChain decodes of each line.
type verifyLine struct {
	Seq         *int64      `json:"seq"`
	Prev        *string     `json:"prev"`
	Time        string      `json:"time"`
	Agent       string      `json:"agent"`
	Action      string      `json:"action"`
	Decision    string      `json:"decision"`
	Of          *int64      `json:"of"`
	Exit        *int        `json:"exit"`
	DurationMS  *int64      `json:"duration_ms"`
	OutputBytes *int64      `json:"output_bytes"`
	Error       string      `json:"error"`
	Checkpoint  *Checkpoint `json:"checkpoint"`
}

// verifyChain checks the chain line by line; it returns the line number
// after the last line read.
func verifyChain(r io.Reader, opts VerifyOptions) (Report, int, error) {
	br := bufio.NewReaderSize(r, 64*1024)
	var rep Report
	prev := GenesisPrev
	var off int64
	open := map[int64]Unfinished{}
	finish := func() {
		for _, u := range open {
			rep.Unfinished = append(rep.Unfinished, u)
		}
		sort.Slice(rep.Unfinished, func(i, j int) bool { return rep.Unfinished[i].Seq < rep.Unfinished[j].Seq })
	}
	for lineNo := 1; ; lineNo++ {
		start := off
		raw, err := br.ReadBytes('\n')
		off += int64(len(raw))
		if err != nil && err != io.EOF {
			return rep, lineNo, fmt.Errorf("read audit log at line %d: %w", lineNo, err)
		}
		if len(raw) == 0 {
			finish()
			if h := opts.Head; h != nil && !rep.Anchored {
				return rep, lineNo, &VerifyError{Line: lineNo, Seq: rep.LastSeq + 1, Offset: start, Problem: ProblemAnchor, Detail: fmt.Sprintf(
					"the chain ends at seq %d, before the anchored head seq %d (hash %s): events were cut from its end (or it was rewritten shorter)", rep.LastSeq, h.Seq, short(h.Hash))}
			}
			return rep, lineNo, nil
		}
		want := rep.LastSeq + 1
		if raw[len(raw)-1] != '\n' {
			return rep, lineNo, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemTruncated, Detail: fmt.Sprintf(
				"line %d is truncated (no trailing newline / incomplete JSON): the writer probably crashed mid-append; the %d events before it verify", lineNo, lineNo-1)}
		}
		line := raw[:len(raw)-1]
		stored, ok, match := lineHash(line)
		var ev verifyLine
		if !ok || json.Unmarshal(line, &ev) != nil || ev.Seq == nil || ev.Prev == nil {
			return rep, lineNo, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemMalformed,
				Detail: "not a JSON audit event ending in its hash field (the line was edited or corrupted)"}
		}
		if !match {
			return rep, lineNo, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemEdited,
				Detail: fmt.Sprintf("the line (claiming seq %d) does not match its hash: its bytes were changed after it was written", *ev.Seq)}
		}
		if *ev.Seq != want {
			ve := seqError(br, lineNo, want, *ev.Seq)
			ve.Offset = start
			return rep, lineNo, ve
		}
		if *ev.Prev != prev {
			return rep, lineNo, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemPrevMismatch,
				Detail: fmt.Sprintf("prev is %q but the previous line's hash is %q: the line was rewritten or a line before it replaced", short(*ev.Prev), short(prev))}
		}
		if ev.Decision == DecisionCheckpoint && ev.Checkpoint != nil {
			pub := opts.PublicKey
			previous := false
			for _, k := range opts.PreviousKeys {
				if pub != nil && ev.Checkpoint.Key == KeyID(k) && ev.Checkpoint.Key != KeyID(pub) {
					pub, previous = k, true
				}
			}
			if detail := checkCheckpoint(ev.Checkpoint, want, prev, pub); detail != "" {
				return rep, lineNo, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemSignature, Detail: detail}
			}
			if previous {
				rep.PreviousKeyCheckpoints++
			} else {
				rep.Checkpoints++
				rep.SignedSeq, rep.UnsignedTail = ev.Checkpoint.Seq, -1
			}
		}
		if ev.Of != nil {
			delete(open, *ev.Of)
		} else if ExpectsOutcome(&Event{Decision: ev.Decision, Exit: ev.Exit, DurationMS: ev.DurationMS, OutputBytes: ev.OutputBytes, Error: ev.Error}) {
			open[want] = Unfinished{Seq: want, Agent: ev.Agent, Action: ev.Action, Time: ev.Time}
		}
		if h := opts.Head; h != nil && h.Seq == want {
			if stored != h.Hash {
				return rep, lineNo, &VerifyError{Line: lineNo, Seq: want, Offset: start, Problem: ProblemAnchor, Detail: fmt.Sprintf(
					"seq %d has hash %s, not the anchored %s: the chain was rewritten (from scratch, or from before seq %d)", want, short(stored), short(h.Hash), want)}
			}
			rep.Anchored = true
		} else if rep.Anchored {
			rep.AfterAnchor++
		}
		prev = stored
		rep.Events++
		rep.UnsignedTail++
		rep.LastSeq = want
		rep.LastHash = stored
	}
}

// checkCheckpoint returns what is wrong with the checkpoint on line seq
// whose prev is prev, or "" when it signs the line before it (under pub,
// when given).
func checkCheckpoint(cp *Checkpoint, seq int64, prev string, pub ed25519.PublicKey) string {
	if cp.Seq != seq-1 || cp.Hash != prev {
		return fmt.Sprintf("the checkpoint claims seq %d hash %s, but the line before it is seq %d hash %s: the chain was rewritten", cp.Seq, short(cp.Hash), seq-1, short(prev))
	}
	if pub == nil {
		return ""
	}
	if cp.Key != KeyID(pub) {
		return fmt.Sprintf("the checkpoint is signed by %s, not by the given public key %s: the chain was re-signed by someone else", cp.Key, KeyID(pub))
	}
	sig, err := base64.StdEncoding.DecodeString(cp.Sig)
	if err != nil || !ed25519.Verify(pub, CheckpointMessage(cp.Seq, cp.Hash), sig) {
		return "the checkpoint's signature does not verify under the given public key: the chain was rewritten with recomputed hashes"
	}
	return ""
}

// VerifyFile verifies the log at path as it stands at the moment of the
// call. It takes the writers' lock only long enough to read the file's size,
// so a gateway appending meanwhile is not held up and a line being written
// is not mistaken for one truncated by a crash.
func VerifyFile(path string) (Report, error) {
	return VerifyFileWith(path, VerifyOptions{})
}

// VerifyFileWith is VerifyFile with the extra checks of opts.
func VerifyFileWith(path string, opts VerifyOptions) (Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return Report{}, fmt.Errorf("open audit log: %w", err)
	}
	defer f.Close()
	size, err := stableSize(f)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", path, err)
	}
	return VerifyWith(io.NewSectionReader(f, 0, size), opts)
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
