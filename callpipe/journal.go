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
	err := j.sink.Append(ev)
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
