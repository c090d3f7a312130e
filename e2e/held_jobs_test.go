package e2e

import (
	"strings"
	"testing"
)

// TestJobToolsThroughThePipeline: job-status, job-logs and job-cancel are
// decided and audited like any tool — a decision event before the answer
// and an outcome event after it — and an agent reaches only its own jobs:
// another agent naming the job's id is refused at the decision, with the
// answer an unknown id gets, audited as a deny, and its list shows
// nothing of the owner's.
func TestJobToolsThroughThePipeline(t *testing.T) {
	t.Parallel()
	e := startJobs(t)
	alice, bob := e.clients["alice"], e.clients["bob"]
	id, _, _ := e.startLong(t, "alice", 10)
	if text, isErr, _, err := call(t, alice, "job-status", map[string]any{"job_id": id}); err != nil || isErr || !strings.Contains(text, id) {
		t.Fatalf("alice's job-status: %q %v", text, err)
	}
	if _, isErr, _, err := call(t, alice, "job-logs", map[string]any{"job_id": id}); err != nil || isErr {
		t.Fatalf("alice's job-logs: %v", err)
	}
	refusals := map[string]string{}
	for _, tool := range []string{"job-status", "job-logs", "job-cancel"} {
		text, isErr, _, err := call(t, bob, tool, map[string]any{"job_id": id})
		if err != nil || !isErr || !strings.HasPrefix(text, `DENIED: no such job "`+id+`" of this agent on work`) {
			t.Fatalf("bob's %s on alice's job: %q %v", tool, text, err)
		}
		refusals[tool] = text
		unknown, _, _, _ := call(t, bob, tool, map[string]any{"job_id": "job-0000000000000000"})
		if strings.Replace(unknown, "job-0000000000000000", id, 1) != text {
			t.Errorf("bob's %s: another agent's job %q answers unlike an unknown one %q", tool, text, unknown)
		}
	}
	if text, _, _, _ := call(t, bob, "job-status", map[string]any{}); strings.Contains(text, id) {
		t.Errorf("bob's job list shows alice's job: %q", text)
	}

	events := jobAuditEvents(t, e.dir)
	for _, tool := range []string{"job-status", "job-logs"} {
		action := "command:call:work:" + tool
		if findEvent(events, action, "allow", "") == nil || findEvent(events, action, "completed", "") == nil {
			t.Errorf("alice's %s is not audited as a decision and an outcome", tool)
		}
	}
	for tool, text := range refusals {
		ev := findEvent(events, "command:call:work:"+tool, "deny", `no such job "`+id+`"`)
		if ev == nil || ev["agent"] != "bob" || "DENIED: "+ev["reason"].(string) != text {
			t.Errorf("bob's refused %s: audited as %v", tool, ev)
		}
	}
	if ev := findEvent(events, "command:call:work:job-cancel", "completed", ""); ev != nil {
		t.Errorf("a refused cancel ran: %v", ev)
	}
	if r := toolgate(t, e.dir, nil, "audit", "verify", "audit.jsonl"); r.code != 0 {
		t.Errorf("audit verify: %s%s", r.stdout, r.stderr)
	}
}
