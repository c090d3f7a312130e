package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// TestTeamApproveFor: `approve ID --for 4s` lets the call run and the next
// call of the same tool by the same agent — other arguments too — run at
// once without asking; the rule is audited when made and when it ends,
// and after it the same call is held again. A strict call cannot be
// approved --for.
func TestTeamApproveFor(t *testing.T) {
	t.Parallel()
	d, auditPath := teamDaemon(t, teamOptions{wait: "60s"})
	notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)

	first := callAsync(t, notes, "append", map[string]any{"text": "one"}, nil)
	p := awaitPending(t, d)
	r := operatorCLI(t, d, aliceToken, "approve", p.ID, "--for", "4s")
	if r.code != 0 || !strings.Contains(r.stdout, "approved "+p.ID) || !strings.Contains(r.stdout, "without asking until") {
		t.Fatalf("approve --for: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := receive(t, first); got.isErr {
		t.Fatalf("the approved call: %+v", got)
	}
	start := time.Now()
	text, isErr, _, err := call(t, notes, "append", map[string]any{"text": "two, other arguments"})
	if err != nil || isErr || time.Since(start) > 3*time.Second {
		t.Fatalf("the next call under the rule: %q %v %v after %s, want it run at once", text, isErr, err, time.Since(start))
	}
	covered := eventsWhere(t, auditPath, func(ev audit.Event) bool {
		return ev.Decision == "allow" && strings.Contains(ev.Reason, "approve --for")
	})
	if len(covered) != 1 || recordOf(covered[0]).By != "operator:alice" || recordOf(covered[0]).Rule == "" || recordOf(covered[0]).From != p.ID {
		t.Fatalf("the covered call's decision event: %+v", covered)
	}
	rule := recordOf(covered[0]).Rule

	// A strict call: approved one at a time.
	vault := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
	strict := callAsync(t, vault, "stash", map[string]any{"item": "gold"}, nil)
	sp := awaitPending(t, d, p.ID)
	if r := operatorCLI(t, d, aliceToken, "approve", sp.ID, "--for", "1h"); r.code == 0 || !strings.Contains(r.stderr, "strict") {
		t.Errorf("approve --for on a strict call: exit %d %s, want refused naming strict", r.code, r.stderr)
	}
	if r := operatorCLI(t, d, aliceToken, "approve", sp.ID); r.code != 0 {
		t.Fatalf("approve the strict call once: %s", r.stderr)
	}
	receive(t, strict)

	// The rule ends: audited once, and the same tool is held again.
	waitFor(t, 20*time.Second, "the rule's end in the audit", func() bool {
		return len(eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "rule-expired" && recordOf(ev).Rule == rule })) == 1
	})
	again := callAsync(t, notes, "append", map[string]any{"text": "three"}, nil)
	p3 := awaitPending(t, d, p.ID, sp.ID)
	if p3.Action != "command:call:notes:append" {
		t.Fatalf("after the rule ended: pending %+v", p3)
	}
	operatorCLI(t, d, aliceToken, "deny", p3.ID)
	receive(t, again)
	made := eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "approved" && recordOf(ev).ID == p.ID })
	if len(made) != 1 || !strings.Contains(made[0].Reason, "approve --for 4s (rule "+rule+")") {
		t.Errorf("the approval's event does not record the rule: %+v", made)
	}
}

// TestTeamDenyFor: `deny ID --for 1h` refuses the waiting call and every
// identical call after it at once, without opening a request; a call with
// other arguments still asks. Plain `deny` keeps its documented meaning:
// the next identical call is told once, the one after asks again.
func TestTeamDenyFor(t *testing.T) {
	t.Parallel()
	d, auditPath := teamDaemon(t, teamOptions{wait: "60s"})
	vault := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
	first := callAsync(t, vault, "stash", map[string]any{"item": "crown jewels"}, nil)
	p := awaitPending(t, d)
	r := operatorCLI(t, d, bobToken, "deny", p.ID, "--reason", "never the jewels", "--for", "1h")
	if r.code != 0 || !strings.Contains(r.stdout, "refused until") {
		t.Fatalf("deny --for: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if got := receive(t, first); !got.isErr || !strings.Contains(got.text, "never the jewels") {
		t.Fatalf("the waiting call: %+v", got)
	}
	for i := range 3 {
		start := time.Now()
		text, isErr, _, err := call(t, vault, "stash", map[string]any{"item": "crown jewels"})
		if err != nil || !isErr || !strings.Contains(text, "denied by operator:bob until") || !strings.Contains(text, "never the jewels") || time.Since(start) > 3*time.Second {
			t.Fatalf("identical call %d after deny --for: %q %v after %s", i, text, err, time.Since(start))
		}
	}
	if lr := operatorCLI(t, d, bobToken, "list", "--format", "json"); strings.TrimSpace(lr.stdout) != "[]" {
		t.Errorf("calls refused by deny --for opened requests: %s", lr.stdout)
	}
	other := callAsync(t, vault, "stash", map[string]any{"item": "a spoon"}, nil)
	po := awaitPending(t, d, p.ID)
	operatorCLI(t, d, bobToken, "approve", po.ID)
	if got := receive(t, other); got.isErr {
		t.Errorf("a call with other arguments: %+v, want it asked and approved", got)
	}
	refused := eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "deny" && strings.Contains(ev.Reason, "deny --for") })
	if len(refused) != 3 || recordOf(refused[0]).By != "operator:bob" {
		t.Errorf("audited refusals under the rule: %d, want 3 by bob", len(refused))
	}
	help := toolgate(t, t.TempDir(), nil, "approvals", "help")
	if strings.Contains(help.stdout+help.stderr, "for good") || !strings.Contains(help.stdout+help.stderr, "asks again") {
		t.Errorf("deny's help does not say what it does:\n%s%s", help.stdout, help.stderr)
	}
}
