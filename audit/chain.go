package audit

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strconv"
	"time"
)

// Sink is where the call pipeline appends audit events: the JSONL Log of
// this package, or the PostgreSQL chain of package state. Both produce the
// same line bytes and hashes, so either verifies with Verify.
type Sink interface {
	// Append records ev durably as the next event of the chain; an error
	// means it is not known to be recorded and the audited call must fail.
	Append(ev *Event) error
	// Close flushes what is pending (and writes the closing checkpoint when
	// signing); appends after Close fail.
	Close() error
}

// DeferringSink is a Sink that can also record an event whose fsync may
// trail its return (Log.AppendDeferred): written in order at once, synced
// with the next commit or within DeferredSyncWithin. The gateway uses it
// for a call's outcome event only; a sink without it (the PostgreSQL
// chain) records outcomes with Append.
type DeferringSink interface {
	Sink
	AppendDeferred(ev *Event) error
}

// Decisions and actions that the audit package writes itself.
const (
	// DecisionCheckpoint marks a signed checkpoint event.
	DecisionCheckpoint = "checkpoint"
	// DecisionRecovered marks the event recording a torn line moved aside.
	DecisionRecovered = "recovered"
	// ActionCheckpoint and ActionRecover are their action labels.
	ActionCheckpoint = "audit:checkpoint"
	ActionRecover    = "audit:recover"
	// DefaultCheckpointEvery is how many events lie between two periodic
	// checkpoints when Options.CheckpointEvery is zero.
	DefaultCheckpointEvery = 1000
)

// Checkpoint is a signature over the seq and hash of the line before the
// checkpoint event: holding the public key, a verifier knows that the chain
// up to that line is the one the key holder wrote.
type Checkpoint struct {
	// Seq and Hash name the signed line (the checkpoint's own prev).
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
	// Key is the signer's public key, "ed25519:" + base64, so a verifier
	// given another key says so plainly.
	Key string `json:"key"`
	// Sig is the base64 ed25519 signature of CheckpointMessage(Seq, Hash).
	Sig string `json:"sig"`
}

// CheckpointMessage is the byte string a checkpoint signs; the prefix keeps
// the signature from being valid for anything but a toolgate audit line.
func CheckpointMessage(seq int64, hash string) []byte {
	return []byte("toolgate-audit-checkpoint-v1\n" + strconv.FormatInt(seq, 10) + "\n" + hash + "\n")
}

// KeyID renders a public key as a Checkpoint's Key field.
func KeyID(pub ed25519.PublicKey) string {
	return "ed25519:" + base64.StdEncoding.EncodeToString(pub)
}

// Head is the end of a chain: the seq and hash of its last line, and
// whether that line is a checkpoint (so Close does not sign twice).
type Head struct {
	Seq    int64
	Hash   string
	Sealed bool
}

// Line is one event rendered for the chain.
type Line struct {
	// Event is the event written (nil for nothing); its Seq, Prev and Time
	// are set, its Hash is left for the writer to set once durable.
	Event *Event
	// Bytes is the line including its trailing newline.
	Bytes []byte
	// Hash is the line's hash.
	Hash string
}

// Signer writes checkpoints with one ed25519 key.
type Signer struct {
	key   ed25519.PrivateKey
	keyID string
	every int64
}

// NewSigner returns a signer that checkpoints every `every` events (0:
// DefaultCheckpointEvery); nil when key is nil, so signing stays optional.
func NewSigner(key ed25519.PrivateKey, every int) *Signer {
	if key == nil {
		return nil
	}
	if every <= 0 {
		every = DefaultCheckpointEvery
	}
	return &Signer{key: key, keyID: KeyID(key.Public().(ed25519.PublicKey)), every: int64(every)}
}

// checkpoint renders the checkpoint event following head.
func (s *Signer) checkpoint(head Head, now time.Time) (Line, error) {
	sig := ed25519.Sign(s.key, CheckpointMessage(head.Seq, head.Hash))
	ev := &Event{
		Seq: head.Seq + 1, Time: now.UTC(), Action: ActionCheckpoint, Decision: DecisionCheckpoint,
		Reason: "signed checkpoint of seq " + strconv.FormatInt(head.Seq, 10),
		Checkpoint: &Checkpoint{Seq: head.Seq, Hash: head.Hash, Key: s.keyID,
			Sig: base64.StdEncoding.EncodeToString(sig)},
		Prev: head.Hash,
	}
	b, h, err := encodeLine(ev)
	return Line{Event: ev, Bytes: b, Hash: h}, err
}

// CloseCheckpoint returns the checkpoint to write at close, if head is not
// already one (ok false then). A nil Signer never checkpoints.
func (s *Signer) CloseCheckpoint(head Head, now time.Time) (Line, bool, error) {
	if s == nil || head.Sealed || head.Seq == 0 {
		return Line{}, false, nil
	}
	l, err := s.checkpoint(head, now)
	return l, err == nil, err
}

// SealBatch chains evs onto head in order: each gets seq, prev and (when
// zero) the current time in UTC; a signer adds a checkpoint after every
// event whose seq is a multiple of its interval. An event that cannot be
// encoded gets its error in errs (same index as evs) and takes no seq. It
// returns the lines to write, in order, and the head after them.
func SealBatch(head Head, evs []*Event, s *Signer, now time.Time) (lines []Line, errs []error, next Head) {
	errs = make([]error, len(evs))
	for i, ev := range evs {
		if ev == nil {
			errs[i] = errors.New("audit: Append of a nil event")
			continue
		}
		ev.Seq, ev.Prev, ev.Hash = head.Seq+1, head.Hash, ""
		if ev.Time.IsZero() {
			ev.Time = now
		}
		ev.Time = ev.Time.UTC()
		b, h, err := encodeLine(ev)
		if err != nil {
			errs[i] = err
			ev.Seq, ev.Prev = 0, ""
			continue
		}
		lines = append(lines, Line{Event: ev, Bytes: b, Hash: h})
		head = Head{Seq: ev.Seq, Hash: h, Sealed: ev.Decision == DecisionCheckpoint && ev.Checkpoint != nil}
		if s != nil && !head.Sealed && head.Seq%s.every == 0 {
			// A checkpoint holds only plain fields and always encodes.
			if cp, err := s.checkpoint(head, now); err == nil {
				lines = append(lines, cp)
				head = Head{Seq: cp.Event.Seq, Hash: cp.Hash, Sealed: true}
			}
		}
	}
	return lines, errs, head
}
