package audit

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Anchor names one event of a chain by its seq and hash. Kept outside the
// chain (a log pipeline, a SIEM, a ticket), it lets `audit verify --head`
// show what the chain alone cannot: that its end was cut off after that
// event, or that it was rewritten from scratch — without a signing key too.
type Anchor struct {
	Seq  int64
	Hash string
}

// String is the anchor as `audit verify --head` takes it: SEQ:HASH.
func (a Anchor) String() string { return strconv.FormatInt(a.Seq, 10) + ":" + a.Hash }

// ParseAnchor reads SEQ:HASH (as logged and exported on /metrics).
func ParseAnchor(s string) (Anchor, error) {
	seq, hash, ok := strings.Cut(strings.TrimSpace(s), ":")
	n, err := strconv.ParseInt(seq, 10, 64)
	if !ok || err != nil || n < 1 || hash == "" || strings.ContainsAny(hash, " \t:") {
		return Anchor{}, fmt.Errorf("%q is not an anchored head: write SEQ:HASH, e.g. 1042:%s (the anchor the gateway logs as \"audit chain head\" and exports as toolgate_audit_anchor_info)", s, "9f86d081884c7d65…")
	}
	return Anchor{Seq: n, Hash: hash}, nil
}

// DefaultHeadLogEvery bounds how old the last logged head may be while the
// chain moves and nothing signs it (Options.HeadLogEvery).
const DefaultHeadLogEvery = time.Minute

// HeadAnnouncer tells the world where the chain ends: every commit's head
// to Options.OnHead, and, for anchoring, a log line (and OnHead with
// anchored set) at each checkpoint, at open and close, and — when no
// signing key makes checkpoints — at most HeadLogEvery after the head
// moved. A commit never waits on it: a timer logs a head that moved
// within the interval. Safe for concurrent use.
type HeadAnnouncer struct {
	onHead func(Anchor, bool)
	log    *slog.Logger
	every  time.Duration
	signed bool

	mu      sync.Mutex
	cur     Anchor
	logged  Anchor
	lastLog time.Time
	timer   *time.Timer
	closed  bool
}

// NewHeadAnnouncer returns the announcer opts ask for; nil when they ask
// for none (its methods accept a nil receiver).
func NewHeadAnnouncer(opts Options) *HeadAnnouncer {
	if opts.OnHead == nil && opts.Logger == nil {
		return nil
	}
	every := opts.HeadLogEvery
	if every <= 0 {
		every = DefaultHeadLogEvery
	}
	return &HeadAnnouncer{onHead: opts.OnHead, log: opts.Logger, every: every, signed: opts.SigningKey != nil}
}

// Opened announces the head a sink found at open.
func (a *HeadAnnouncer) Opened(h Head) {
	if a == nil || h.Seq == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cur = Anchor{Seq: h.Seq, Hash: h.Hash}
	a.anchorLocked("open")
}

// Committed announces the head after a batch of lines was written.
func (a *HeadAnnouncer) Committed(lines []Line, h Head) {
	if a == nil || len(lines) == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.cur = Anchor{Seq: h.Seq, Hash: h.Hash}
	if a.onHead != nil {
		a.onHead(a.cur, false)
	}
	for _, ln := range lines {
		if ln.Event != nil && ln.Event.Decision == DecisionCheckpoint && ln.Event.Checkpoint != nil {
			a.anchorLocked("checkpoint")
			return
		}
	}
	if a.signed {
		return
	}
	if wait := a.every - time.Since(a.lastLog); wait <= 0 {
		a.anchorLocked("interval")
	} else if a.timer == nil {
		a.timer = time.AfterFunc(wait, a.tick)
	}
}

func (a *HeadAnnouncer) tick() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.timer = nil
	if !a.closed && a.cur != a.logged {
		a.anchorLocked("interval")
	}
}

// anchorLocked logs the current head for anchoring; a.mu is held.
func (a *HeadAnnouncer) anchorLocked(reason string) {
	a.logged, a.lastLog = a.cur, time.Now()
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
	if a.onHead != nil {
		a.onHead(a.cur, true)
	}
	if a.log != nil {
		a.log.Info("audit chain head", "seq", a.cur.Seq, "hash", a.cur.Hash, "anchor", a.cur.String(), "at", reason,
			"verify", "toolgate audit verify --head "+a.cur.String())
	}
}

// Close logs the final head unless it was logged already, and stops.
func (a *HeadAnnouncer) Close() {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	if a.cur.Seq > 0 && a.cur != a.logged {
		a.anchorLocked("close")
	}
	a.closed = true
	if a.timer != nil {
		a.timer.Stop()
		a.timer = nil
	}
}
