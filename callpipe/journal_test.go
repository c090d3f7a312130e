package callpipe

import (
	"testing"

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
