package callpipe

import (
	"sync"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// Appender is where audit events go: the JSONL log or a shared store.
// Append returns only once the event is recorded (synced, when the
// workspace asks for fsync); any error means it is not known to be.
type Appender interface {
	Append(ev *audit.Event) error
}

// DeferringAppender is an Appender that can also record an event whose
// fsync may come after Append returns (audit.Log.AppendDeferred): the
// event is written, in order, before it returns, and synced with the next
// commit or within audit.DeferredSyncWithin.
type DeferringAppender interface {
	Appender
	AppendDeferred(ev *audit.Event) error
}

// Journal is the gateway's one path to the audit: it appends and keeps
// the audit's health, so that while appends fail every allowed call is
// refused before anything runs (the audit fails closed).
type Journal struct {
	sink Appender

	mu     sync.Mutex
	err    string
	errAt  time.Time
	okAt   time.Time
	events int64
}

// NewJournal returns a journal over sink.
func NewJournal(sink Appender) *Journal { return &Journal{sink: sink} }

// Append records ev and the health of the audit.
func (j *Journal) Append(ev *audit.Event) error {
	return j.record(j.sink.Append(ev))
}

// AppendOutcome records a call's outcome event: like Append, but on a
// sink that can defer an fsync (DeferringAppender) it returns once the
// event is written, and its fsync is the next commit's — the next call's
// write-ahead decision event, which must be durable before that call runs
// — or one within audit.DeferredSyncWithin. So a crash of the machine can
// lose an outcome, never a decision: every decision is synced before its
// call runs. Sinks without it (the PostgreSQL chain) commit it as Append.
func (j *Journal) AppendOutcome(ev *audit.Event) error {
	if d, ok := j.sink.(DeferringAppender); ok {
		return j.record(d.AppendDeferred(ev))
	}
	return j.Append(ev)
}

// record keeps the health of the audit after an append that returned err.
func (j *Journal) record(err error) error {
	now := time.Now().UTC()
	j.mu.Lock()
	defer j.mu.Unlock()
	if err != nil {
		j.err, j.errAt = err.Error(), now
	} else {
		j.err, j.okAt = "", now
		j.events++
	}
	return err
}

// Failing returns the last append's error while appends fail, else "".
// The refusal a failing audit causes is itself an append attempt, so the
// first success lets calls through again.
func (j *Journal) Failing() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Health is the audit's state for the status API.
type Health struct {
	OK       bool
	Error    string
	ErrorAt  time.Time
	LastOKAt time.Time
	Appended int64
}

// Health reports the audit's state.
func (j *Journal) Health() Health {
	j.mu.Lock()
	defer j.mu.Unlock()
	return Health{OK: j.err == "", Error: j.err, ErrorAt: j.errAt, LastOKAt: j.okAt, Appended: j.events}
}
