package e2e

import (
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFleetEmbedded: a daemon and two stdio instances (what harnesses
// launch) on one workspace share the embedded store. A call held by one
// stdio instance is listed by the daemon, approved from the CLI while it
// waits, wakes and runs; a call held by the other outlasts its wait, and
// the command its refusal names approves it, so the repeated call runs.
// The daemon's admin API sees both; the chain verifies.
func TestFleetEmbedded(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{wait: "4s"})
	d := f.daemon(t)
	s1 := mcpStdio(t, f.env, "serve", "-w", f.ws, "--agent", "a1", "--stdio", "--surface", "vault")
	s2 := mcpStdio(t, f.env, "serve", "-w", f.ws, "--agent", "a2", "--stdio", "--surface", "vault")

	held1 := callAsync(t, s1, "stash", map[string]any{"item": "from-a1"}, nil)
	held2 := callAsync(t, s2, "stash", map[string]any{"item": "from-a2"}, nil)
	p1 := pendingOn(t, d, "a1")
	if p1.Action != "command:call:vault:stash" || !strings.Contains(string(p1.Arguments), "from-a1") {
		t.Fatalf("the daemon lists %+v", p1)
	}
	if r := f.cli(t, "approvals", "-w", f.ws, "approve", p1.ID); r.code != 0 {
		t.Fatalf("approvals -w approve: exit %d: %s", r.code, r.stderr)
	}
	if r := receive(t, held1); r.isErr {
		t.Fatalf("the approved call of stdio instance 1: %q", r.text)
	}

	// The second call gives up waiting and says how to approve it.
	r2 := receive(t, held2)
	id := approvalIDPattern.FindString(r2.text)
	hint := regexp.MustCompile("`toolgate (approvals -w [^`]+)`").FindStringSubmatch(r2.text)
	if !r2.isErr || id == "" || hint == nil || !strings.HasSuffix(hint[1], "approve "+id) {
		t.Fatalf("held call of stdio instance 2: %q, want approval pending with a `toolgate approvals -w` hint", r2.text)
	}
	if p := pendingOn(t, d, "a2"); p.ID != id {
		t.Fatalf("the daemon lists %s, the call waits on %s", p.ID, id)
	}
	cmd := exec.Command(binary, strings.Fields(hint[1])...) // the hint, run as printed
	cmd.Env, cmd.Dir = append(cmd.Environ(), f.env...), t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the hint's command %q: %v\n%s", hint[1], err, out)
	}
	if text, isErr, _, err := call(t, s2, "stash", map[string]any{"item": "from-a2"}); err != nil || isErr {
		t.Fatalf("the repeated call after the hint's approval: %q %v", text, err)
	}
	var left []pendingEntry
	if adminJSON(t, d, "GET", "/admin/approvals", &left) != http.StatusOK || len(left) != 0 {
		t.Fatalf("still pending: %+v", left)
	}

	got := sideLines(t, f.side)
	slices.Sort(got)
	if strings.Join(got, ",") != "from-a1,from-a2" {
		t.Fatalf("side effects %v, want each approved call once", got)
	}
	n := f.verifyChain(t)
	evs := f.chainEvents(t)
	if n != len(evs) {
		t.Fatalf("verify counts %d events, export %d", n, len(evs))
	}
	approved := 0
	for _, ev := range evs {
		if ev.Decision == "approved" {
			approved++
		}
	}
	if approved != 2 {
		t.Fatalf("%d approval decisions audited, want 2 (each once, by the process that decided)", approved)
	}
}
