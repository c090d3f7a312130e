package gateway

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// reloadWorkspace has a read (echo:say, open), a strict write
// (vault:stash) and two agents; GRANTS and TOKEN are replaced per test.
const reloadWorkspace = `version: 1
gateway:
  admin_token: {env: ADMIN}
  approvals: {wait: 50ms, ttl: 10m}
command_packs:
  - id: echo
    permission: open
    commands:
      - id: say
        argv: [echo, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: read
  - id: vault
    permission: strict
    commands:
      - id: stash
        argv: [echo, stash, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
agents:
  - id: a
    token: {env: TOKEN}
    grants: [GRANTS]
`

type reloadEnv struct {
	g    *Gateway
	path string
	env  map[string]string
}

func openReload(t *testing.T, grants string) *reloadEnv {
	t.Helper()
	dir := t.TempDir()
	e := &reloadEnv{path: filepath.Join(dir, "toolgate.yaml"), env: map[string]string{
		"ADMIN": "admin-token-0123456789", "TOKEN": "agent-token-0123456789", "TOKEN2": "agent-token-2-0123456789", "PATH": os.Getenv("PATH"),
	}}
	e.write(t, grants, "TOKEN")
	g, err := Open(context.Background(), e.path, Options{Getenv: func(k string) string { return e.env[k] }, WatchEvery: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	e.g = g
	return e
}

func (e *reloadEnv) write(t *testing.T, grants, tokenEnv string) {
	t.Helper()
	y := strings.NewReplacer("GRANTS", grants, "{env: TOKEN}", "{env: "+tokenEnv+"}").Replace(reloadWorkspace)
	writeAtomically(t, e.path, y)
}

// writeAtomically saves like an editor: a temporary file renamed over.
func writeAtomically(t *testing.T, path, data string) {
	t.Helper()
	tmp := path + ".swp"
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// reloadEvents returns the gateway:reload events of the audit.
func reloadEvents(t *testing.T, g *Gateway) []audit.Event {
	t.Helper()
	var out []audit.Event
	err := g.audit.Tail(context.Background(), audit.TailOptions{}, func(r audit.Record) error {
		if r.Event.Action == ActionReload {
			out = append(out, r.Event)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReloadGrantRemoved: removing a grant from the file stops the next
// call; the revision in force is the new file's, and the reload is audited.
func TestReloadGrantRemoved(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say, tool:vault:stash")
	if res := callPack(t, e.g, "a", "echo", "say", map[string]any{"n": "1"}); res.IsError {
		t.Fatalf("granted call refused: %s", resultText(res))
	}
	before := e.g.Status().Workspace.Revision
	e.write(t, "tool:vault:stash", "TOKEN")
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	res := callPack(t, e.g, "a", "echo", "say", map[string]any{"n": "2"})
	if !res.IsError || !strings.HasPrefix(resultText(res), DeniedPrefix) {
		t.Fatalf("call after its grant was removed: %q isError %v", resultText(res), res.IsError)
	}
	st := e.g.Status()
	if st.Workspace.Revision == before || st.Reload.Revision != st.Workspace.Revision || st.Reload.Reloads != 1 || st.Reload.Error != "" {
		t.Fatalf("status after reload: %+v (revision before %s)", st.Reload, before)
	}
	evs := reloadEvents(t, e.g)
	if len(evs) != 1 || evs[0].Decision != DecisionReloaded || evs[0].Revision != st.Workspace.Revision ||
		!strings.Contains(evs[0].Reason, "agent a changed") {
		t.Fatalf("reload events: %+v", evs)
	}
}

// TestReloadRefusesBadFiles: a file failing any load-time check leaves the
// revision in force; the error is in the status and the audit.
func TestReloadRefusesBadFiles(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, data, want string
	}{
		{"syntax", "version: 1\nagents: [\n", ""},
		{"unknown field", strings.Replace(reloadWorkspace, "version: 1", "version: 1\nsurprise: true", 1), "surprise"},
		{"wildcard grant", strings.Replace(reloadWorkspace, "GRANTS", "tool:*", 1), "tool:*"},
		{"empty", "", "empty"},
		{"admin token reused by an agent", strings.NewReplacer("GRANTS", "tool:echo:say", "{env: TOKEN}", "{env: ADMIN}").Replace(reloadWorkspace), "admin_token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := openReload(t, "tool:echo:say")
			rev := e.g.Status().Workspace.Revision
			writeAtomically(t, e.path, c.data)
			err := e.g.Reload(context.Background(), ReloadSignal)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Reload: %v, want an error naming %q", err, c.want)
			}
			st := e.g.Status()
			if st.Workspace.Revision != rev || st.Reload.Error == "" || st.Reload.RefusedRevision == "" || st.Reload.Reloads != 0 {
				t.Fatalf("status after a refused reload: %+v", st.Reload)
			}
			if res := callPack(t, e.g, "a", "echo", "say", map[string]any{"n": "1"}); res.IsError {
				t.Fatalf("the old revision is not in force: %s", resultText(res))
			}
			evs := reloadEvents(t, e.g)
			if len(evs) != 1 || evs[0].Decision != DecisionReloadRefused || evs[0].Revision != rev {
				t.Fatalf("reload events: %+v", evs)
			}
		})
	}
}

// TestApprovalBeforeReloadDoesNotRun: an approval given under one revision
// does not let the identical call run under the next: it asks again.
func TestApprovalBeforeReloadDoesNotRun(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say, tool:vault:stash")
	args := map[string]any{"item": "x"}
	res := callPack(t, e.g, "a", "vault", "stash", args)
	id := regexp.MustCompile(`ap-[0-9a-f]+`).FindString(resultText(res))
	if !res.IsError || id == "" {
		t.Fatalf("strict call: %q, want approval pending", resultText(res))
	}
	if !strings.Contains(resultText(res), "toolgate approvals -w "+e.path+" approve "+id) {
		t.Errorf("the hint names no command for this process: %q", resultText(res))
	}
	if _, err := e.g.approvals.Approve(id, "operator"); err != nil {
		t.Fatal(err)
	}
	e.write(t, "tool:vault:stash, tool:echo:say", "TOKEN") // same grants, new revision
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	res = callPack(t, e.g, "a", "vault", "stash", args)
	again := regexp.MustCompile(`ap-[0-9a-f]+`).FindString(resultText(res))
	if !res.IsError || again == "" || again == id {
		t.Fatalf("after the reload the approved call: %q, want a new pending request", resultText(res))
	}
}

// TestReloadTokens: a rotated agent token works at once, the old one not.
func TestReloadTokens(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	whoIs := func(tok string) string {
		r := httptest.NewRequest("POST", "/mcp/echo", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		agent, _ := e.g.auth.Authenticate(httptest.NewRecorder(), r, "echo", "")
		return agent
	}
	if whoIs("agent-token-0123456789") != "a" {
		t.Fatal("initial token not known")
	}
	e.write(t, "tool:echo:say", "TOKEN2")
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	if whoIs("agent-token-0123456789") != "" || whoIs("agent-token-2-0123456789") != "a" {
		t.Fatal("token table not replaced")
	}
}

// TestReloadRestartOnly: settings a reload cannot apply are listed, the
// rest applies; moving lines around changes nothing.
func TestReloadRestartOnly(t *testing.T) {
	t.Parallel()
	e := openReload(t, "tool:echo:say")
	y := strings.Replace(reloadWorkspace, "GRANTS", "tool:echo:say, tool:vault:stash", 1)
	y = strings.Replace(y, "gateway:\n", "# a comment moves every line\ngateway:\n  listen: 127.0.0.1:9999\n", 1)
	y = strings.Replace(y, "ttl: 10m", "ttl: 5m", 1)
	writeAtomically(t, e.path, y)
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	got := e.g.Status().Reload.RestartRequired
	if strings.Join(got, ",") != "gateway.listen,gateway.approvals.ttl" {
		t.Fatalf("restart_required = %v", got)
	}
	if res := callPack(t, e.g, "a", "vault", "stash", map[string]any{"item": "y"}); !strings.Contains(resultText(res), "approval pending") {
		t.Fatalf("the live part (a new grant) did not apply: %q", resultText(res))
	}
	if ch := describeChanges(e.g.ws, e.g.live()); strings.Join(ch, ",") != "agent a changed" {
		t.Fatalf("changes = %v", ch)
	}
	moved := strings.Replace(y, "# a comment", "#\n#\n# a comment", 1)
	writeAtomically(t, e.path, moved)
	if err := e.g.Reload(context.Background(), ReloadSignal); err != nil {
		t.Fatal(err)
	}
	evs := reloadEvents(t, e.g)
	if last := evs[len(evs)-1]; !strings.Contains(last.Reason, "no declaration changed") {
		t.Fatalf("moving lines reported as a change: %s", last.Reason)
	}
}
