package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fleetStatus is what the reload tests read of GET /admin/status.
type fleetStatus struct {
	Workspace struct {
		Revision string `json:"revision"`
	} `json:"workspace"`
	Reload struct {
		Revision    string `json:"revision"`
		Reloads     int    `json:"reloads"`
		LastTrigger string `json:"last_trigger"`
		Error       string `json:"error"`
	} `json:"reload"`
}

func statusOf(t *testing.T, d *daemon) fleetStatus {
	t.Helper()
	var st fleetStatus
	if code := adminJSON(t, d, "GET", "/admin/status", &st); code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	return st
}

// rewrite edits the fleet's workspace file as an editor saves it (a new
// file renamed into place) and returns the new file's revision.
func (f *fleet) rewrite(t *testing.T, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	next := edit(string(b))
	if next == string(b) {
		t.Fatal("the edit changes nothing")
	}
	tmp := f.ws + ".tmp"
	if err := os.WriteFile(tmp, []byte(next), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, f.ws); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(next))
	return hex.EncodeToString(sum[:])
}

// TestReloadWorkspace: editing the workspace of a running deployment — a
// daemon and a stdio instance — takes effect in both without a restart: a
// grant removed stops the next call; a broken file is refused, the old one
// stays in force and the status and the log say why; an approval given
// before a reload does not let the call run after it; SIGHUP reloads too.
func TestReloadWorkspace(t *testing.T) {
	t.Parallel()
	f := newFleet(t, fleetOptions{wait: "2s"})
	d, logs := startLoggedDaemon(t, f.env, "-w", f.ws)
	onDaemon := mcpHTTP(t, d.base+"/mcp/echo", "tok-a1-0123456789abcdef")
	stdio := mcpStdio(t, f.env, "serve", "-w", f.ws, "--agent", "a2", "--stdio", "--surface", "echo")
	say := func(who string) (string, bool) {
		cl := onDaemon
		if who == "stdio" {
			cl = stdio
		}
		text, isErr, _, err := call(t, cl, "say", map[string]any{"n": "x"})
		if err != nil {
			t.Fatalf("%s say: %v", who, err)
		}
		return text, isErr
	}
	for _, who := range []string{"daemon", "stdio"} {
		if text, isErr := say(who); isErr {
			t.Fatalf("%s before the edit: %q", who, text)
		}
	}

	// A grant removed from the file stops the next call, in every process
	// (the agents keep echo:shout, so the surface stays theirs; an agent
	// left with nothing on a surface is answered 404 there instead).
	rev := f.rewrite(t, func(s string) string {
		return strings.ReplaceAll(s, "grants: [pack:echo, tool:side:append", "grants: [tool:echo:shout, tool:side:append")
	})
	waitFor(t, 20*time.Second, "the daemon to load the edit", func() bool { return statusOf(t, d).Workspace.Revision == rev })
	if text, isErr := say("daemon"); !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Fatalf("daemon call after its grant was removed: %q", text)
	}
	waitFor(t, 20*time.Second, "the stdio instance to load the edit", func() bool {
		text, isErr := say("stdio")
		return isErr && strings.HasPrefix(text, "DENIED: ")
	})

	// A broken file is refused; the revision in force stays and says why.
	f.rewrite(t, func(s string) string { return strings.Replace(s, "permission: strict", "permission: stricter", 1) })
	waitFor(t, 20*time.Second, "the broken file to be refused", func() bool { return statusOf(t, d).Reload.Error != "" })
	st := statusOf(t, d)
	if st.Workspace.Revision != rev || !strings.Contains(st.Reload.Error, "stricter") {
		t.Fatalf("status after a broken file: %+v", st)
	}
	rec, ok := logs.find("workspace reload refused; the previous revision stays in force")
	if !ok || !strings.Contains(rec["err"].(string), "stricter") {
		t.Fatalf("no log line saying why the reload was refused: %v", rec)
	}
	if text, isErr := say("daemon"); !isErr {
		t.Fatalf("the refused file's grants are not in force, yet: %q", text)
	}
	// Fixed again (the grant given back): it loads.
	rev = f.rewrite(t, func(s string) string {
		s = strings.Replace(s, "permission: stricter", "permission: strict", 1)
		return strings.Replace(s, "{id: a1, token: {env: A1_TOKEN}, grants: [tool:echo:shout,", "{id: a1, token: {env: A1_TOKEN}, grants: [pack:echo,", 1)
	})
	waitFor(t, 20*time.Second, "the fixed file to load", func() bool {
		st := statusOf(t, d)
		return st.Workspace.Revision == rev && st.Reload.Error == ""
	})
	if text, isErr := say("daemon"); isErr {
		t.Fatalf("grant given back, call still refused: %q", text)
	}

	// An approval granted before a reload does not run after it.
	vault := mcpHTTP(t, d.base+"/mcp/vault", "tok-a1-0123456789abcdef")
	args := map[string]any{"item": "approved-before-reload"}
	text, _, _, err := call(t, vault, "stash", args)
	id := approvalIDPattern.FindString(text)
	if err != nil || id == "" {
		t.Fatalf("strict call: %q %v", text, err)
	}
	if r := f.cli(t, "approvals", "-w", f.ws, "approve", id); r.code != 0 {
		t.Fatalf("approve: %s", r.stderr)
	}
	rev = f.rewrite(t, func(s string) string { return "# reviewed\n" + s })
	waitFor(t, 20*time.Second, "the comment edit to load", func() bool { return statusOf(t, d).Workspace.Revision == rev })
	text, _, _, err = call(t, vault, "stash", args)
	again := approvalIDPattern.FindString(text)
	if err != nil || again == "" || again == id || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Fatalf("the call approved under the old revision, repeated after the reload: %q", text)
	}
	if lines := sideLines(t, f.side); len(lines) != 0 {
		t.Fatalf("side effects %v: the old approval let the call run", lines)
	}

	// SIGHUP reloads even an unchanged file (tokens in files may have
	// rotated), and says so.
	before := statusOf(t, d).Reload.Reloads
	if err := d.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, "SIGHUP to reload", func() bool {
		st := statusOf(t, d)
		return st.Reload.Reloads == before+1 && st.Reload.LastTrigger == "signal"
	})
	// Each process audits its own reloads: the daemon's are exactly these.
	mine := fmt.Sprintf("(pid %d on ", d.cmd.Process.Pid)
	var daemonEvents []string
	others := 0
	for _, ev := range f.chainEvents(t) {
		switch {
		case ev.Action != "gateway:reload":
		case strings.Contains(ev.Reason, mine):
			daemonEvents = append(daemonEvents, ev.Decision)
		default:
			others++
		}
	}
	if strings.Join(daemonEvents, ",") != "reloaded,refused,reloaded,reloaded,reloaded" || others == 0 {
		t.Fatalf("reload events: daemon %v, other processes %d", daemonEvents, others)
	}
	f.verifyChain(t)
}
