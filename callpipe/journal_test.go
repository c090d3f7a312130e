package callpipe

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// TestJournalHealth: the journal reports the audit failing from the first
// failed append until the next success.
func TestJournalHealth(t *testing.T) {
	t.Parallel()
	sink := &flakySink{}
	j := NewJournal(sink)
	if err := j.Append(&audit.Event{Action: "a"}); err != nil {
		t.Fatal(err)
	}
	if h := j.Health(); !h.OK || h.Appended != 1 || h.LastOKAt.IsZero() || j.Failing() != "" {
		t.Errorf("healthy: %+v", h)
	}
	sink.mu.Lock()
	sink.failing = true
	sink.mu.Unlock()
	if err := j.Append(&audit.Event{Action: "b"}); err == nil {
		t.Fatal("a failed append reported success")
	}
	if h := j.Health(); h.OK || h.Error != "disk full" || h.ErrorAt.IsZero() || j.Failing() != "disk full" || h.Appended != 1 {
		t.Errorf("failing: %+v", h)
	}
	sink.mu.Lock()
	sink.failing = false
	sink.mu.Unlock()
	_ = j.Append(&audit.Event{Action: "c"})
	if h := j.Health(); !h.OK || h.Appended != 2 {
		t.Errorf("recovered: %+v", h)
	}
}

// syncRecorder is a sink that can defer a sync, recording how each event
// was appended and whether the run had started by then.
type syncRecorder struct {
	mu      sync.Mutex
	ran     *fakeExec
	entries []string
}

func (s *syncRecorder) note(how string, ev *audit.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, _ := s.ran.counts()
	s.entries = append(s.entries, fmt.Sprintf("%s %s ran=%d", how, ev.Decision, n))
}

func (s *syncRecorder) Append(ev *audit.Event) error { s.note("durable", ev); return nil }

func (s *syncRecorder) AppendDeferred(ev *audit.Event) error { s.note("deferred", ev); return nil }

// TestOutcomeDeferredDecisionDurable: on a sink that can defer a sync, an
// allowed call's decision is appended durably before the run starts and
// only its outcome is deferred; a refusal (the only event of its call) is
// durable too. So a crash can lose an outcome, never a decision.
func TestOutcomeDeferredDecisionDurable(t *testing.T) {
	t.Parallel()
	x := &fakeExec{t: t}
	sink := &syncRecorder{ran: x}
	h := newHarness(t, testWorkspace, time.Second, sink)
	ok := mustCall(t, `{"name":"read","arguments":{"file":"a.txt"}}`)
	refused := mustCall(t, `{"name":"read","arguments":{"file":"c.txt"}}`)
	for _, call := range []*Call{ok, refused} {
		h.pipe.Call(context.Background(), Request{Agent: "bot", Provider: Command, Surface: "notes", Exec: x, Call: call})
	}
	want := []string{"durable allow ran=0", "deferred completed ran=1", "durable deny ran=1"}
	if !slices.Equal(sink.entries, want) {
		t.Fatalf("appends %q, want %q", sink.entries, want)
	}
}
