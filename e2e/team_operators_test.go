package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
)

// TestTeamNamedOperatorsRecordedAsBy: alice approves with her own token,
// bob denies with his, the shared admin token still works; the audit
// records each as by: operator:<id> (the shared token as by: operator),
// whoami names them, and an agent's token is no operator's.
func TestTeamNamedOperatorsRecordedAsBy(t *testing.T) {
	t.Parallel()
	d, auditPath := teamDaemon(t, teamOptions{wait: "60s"})
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)

	first := callAsync(t, cl, "stash", map[string]any{"item": "gold"}, nil)
	p := awaitPending(t, d)
	if r := operatorCLI(t, d, aliceToken, "approve", p.ID); r.code != 0 {
		t.Fatalf("alice approves: exit %d %s", r.code, r.stderr)
	}
	if got := receive(t, first); got.isErr {
		t.Fatalf("approved call: %+v", got)
	}
	second := callAsync(t, cl, "stash", map[string]any{"item": "silver"}, nil)
	p2 := awaitPending(t, d, p.ID)
	if r := operatorCLI(t, d, bobToken, "deny", p2.ID, "--reason", "not silver"); r.code != 0 {
		t.Fatalf("bob denies: exit %d %s", r.code, r.stderr)
	}
	if got := receive(t, second); !got.isErr || !strings.Contains(got.text, "denied by operator:bob: not silver") {
		t.Errorf("denied call: %+v, want bob named", got)
	}
	third := callAsync(t, cl, "stash", map[string]any{"item": "bronze"}, nil)
	p3 := awaitPending(t, d, p.ID, p2.ID)
	if r := operatorCLI(t, d, adminToken, "approve", p3.ID); r.code != 0 {
		t.Fatalf("the admin token approves: exit %d %s", r.code, r.stderr)
	}
	receive(t, third)

	// An agent's token is no operator's; nor is a near miss.
	for _, tok := range []string{writerToken, aliceToken + "x"} {
		if r := operatorCLI(t, d, tok, "list"); r.code == 0 || !strings.Contains(r.stderr, "401") {
			t.Errorf("approvals list with a non-operator token: exit %d %s", r.code, r.stderr)
		}
	}

	want := map[string]string{p.ID: "operator:alice", p2.ID: "operator:bob", p3.ID: "operator"}
	decided := eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "approved" || ev.Decision == "denied" })
	if len(decided) != 3 {
		t.Fatalf("%d decision events, want 3", len(decided))
	}
	for _, ev := range decided {
		rec := recordOf(ev)
		if want[rec.ID] != rec.By || !strings.Contains(ev.Reason, "by "+rec.By) {
			t.Errorf("%s event of %s: by %q (%s), want by %q", ev.Decision, rec.ID, rec.By, ev.Reason, want[rec.ID])
		}
	}
	ran := eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Decision == "allow" && recordOf(ev).ID == p.ID })
	if len(ran) != 1 || recordOf(ran[0]).By != "operator:alice" {
		t.Errorf("the call alice approved is not recorded as hers: %+v", ran)
	}

	req, _ := http.NewRequest("GET", d.base+"/admin/whoami", nil)
	req.Header.Set("Authorization", "Bearer "+bobToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var who struct{ Operator string }
	if err := json.NewDecoder(resp.Body).Decode(&who); err != nil || who.Operator != "operator:bob" {
		t.Errorf("whoami with bob's token: %+v %v", who, err)
	}
}
