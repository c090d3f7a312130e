package callpipe

import (
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// TestOutcomeEvent: the outcome event refers to its decision by Seq,
// carries its binding fields, and redacts what the run reported.
func TestOutcomeEvent(t *testing.T) {
	t.Parallel()
	d := NewEvent("bot", MCP, VerbCall, "srv", "tool")
	d.Seq, d.Decision, d.Reason, d.Tier, d.Revision, d.ArgsSHA256, d.TraceID = 41, "allow", "granted", "open", "r", "sum", "trace"
	exit := 2
	o := outcomeEvent(d, Outcome{Argv: []string{"run", "s3cret"}, Exit: &exit, Duration: 1500 * time.Millisecond, Error: "failed with s3cret", Note: "job j1"}, testRedactor())
	if o.Of == nil || *o.Of != 41 || o.Decision != OutcomeFailed || o.Error != "failed with [REDACTED:t]" || o.Argv[1] != "[REDACTED:t]" {
		t.Errorf("%+v", o)
	}
	if o.Reason != "granted; job j1" || *o.DurationMS != 1500 || o.Action != "mcp:call:srv:tool" || o.TraceID != "trace" || o.Revision != "r" || o.ArgsSHA256 != "sum" {
		t.Errorf("%+v", o)
	}
	ok := outcomeEvent(&audit.Event{Action: "x"}, Outcome{Note: "n"}, testRedactor())
	if ok.Decision != OutcomeCompleted || ok.Reason != "n" {
		t.Errorf("%+v", ok)
	}
	if e := NewEvent("a", Command, VerbJobEnd, "pack", ""); e.Action != "command:job-end:pack" || e.Payload.Member != "" {
		t.Errorf("%+v", e)
	}
}
