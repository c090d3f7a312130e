package e2e

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// opsApprovalsCLI runs `toolgate approvals args…` in the workspace's
// directory with nothing else: no -w, no --server, no
// $TOOLGATE_ADMIN_TOKEN, as an operator who cd'ed there would.
func opsApprovalsCLI(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	base := []string{"TOOLGATE_ADMIN_TOKEN=", "TOOLGATE_WORKSPACE="}
	return toolgate(t, dir, append(base, env...), append([]string{"approvals"}, args...)...)
}

// opsAwaitPending polls `approvals list --format json` in dir until one
// request is pending.
func opsAwaitPending(t *testing.T, dir string, env []string) pendingEntry {
	t.Helper()
	var got pendingEntry
	waitFor(t, 30*time.Second, "a pending request in `toolgate approvals list`", func() bool {
		r := opsApprovalsCLI(t, dir, env, "list", "--format", "json")
		if r.code != 0 {
			t.Fatalf("approvals list: exit %d: %s", r.code, r.stderr)
		}
		var list []pendingEntry
		if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
			t.Fatalf("approvals list --format json: %v\n%s", err, r.stdout)
		}
		if len(list) > 0 {
			got = list[0]
			return true
		}
		return false
	})
	return got
}

// TestOpsApprovalsReadsWorkspaceStore: in a workspace directory whose
// toolgate.yaml names no daemon, `toolgate approvals` works on that
// workspace's embedded store — no flags, no admin token — and the text
// listing shows the arguments once, as compact JSON.
func TestOpsApprovalsReadsWorkspaceStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	y := strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", "60s", "TTL", "10m").Replace(approvalsWorkspace)
	ws := writeFile(t, dir, "toolgate.yaml", y)
	d := startDaemon(t, approvalsEnv, "-w", ws)
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
	item := "gold \"bar\" \\ \u202e"
	done := callAsync(t, cl, "stash", map[string]any{"item": item}, nil)

	p := opsAwaitPending(t, dir, nil)
	r := opsApprovalsCLI(t, dir, nil, "list")
	if r.code != 0 {
		t.Fatalf("approvals list: exit %d: %s", r.code, r.stderr)
	}
	want := `{"item":"gold \"bar\" \\ \u202e"}`
	if !strings.Contains(r.stdout, p.ID) || !strings.Contains(r.stdout, want) {
		t.Errorf("text listing lacks %s with the arguments once, compact, as %s:\n%s", p.ID, want, r.stdout)
	}
	if strings.Contains(r.stdout, `\"item\"`) || strings.Contains(r.stdout, "\u202e") {
		t.Errorf("text listing encodes the arguments twice, or prints a bidirectional override raw:\n%s", r.stdout)
	}
	if r := opsApprovalsCLI(t, dir, nil, "approve", p.ID); r.code != 0 || !strings.Contains(r.stdout, "approved "+p.ID) {
		t.Fatalf("approvals approve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if res := receive(t, done); res.isErr || !strings.Contains(res.text, "stash") {
		t.Errorf("approved call: %+v", res)
	}
	// A workspace named through $TOOLGATE_WORKSPACE from elsewhere is read
	// the same way.
	if r := toolgate(t, t.TempDir(), []string{"TOOLGATE_ADMIN_TOKEN=", "TOOLGATE_WORKSPACE=" + ws}, "approvals", "list"); r.code != 0 || !strings.Contains(r.stdout, "no pending approvals") {
		t.Errorf("approvals list with $TOOLGATE_WORKSPACE: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestOpsApprovalsReadsWorkspaceDaemon: when toolgate.yaml names its
// daemon (gateway.listen), `toolgate approvals` talks to it with the admin
// token gateway.admin_token says where to find — here a file — without
// $TOOLGATE_ADMIN_TOKEN; a wrong token in that file is the daemon's 401,
// which shows the daemon was asked.
func TestOpsApprovalsReadsWorkspaceDaemon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	tokFile := writeFile(t, dir, "admin.token", adminToken+"\n")
	y := strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", "60s", "TTL", "10m",
		"admin_token: {env: TG_ADMIN_TOKEN}", "admin_token: {file: "+tokFile+"}\n  listen: "+addr).Replace(approvalsWorkspace)
	ws := writeFile(t, dir, "toolgate.yaml", y)
	d := startDaemon(t, approvalsEnv, "-w", ws, "--listen", addr)
	cl := mcpHTTP(t, d.base+"/mcp/vault", writerToken)
	done := callAsync(t, cl, "stash", map[string]any{"item": "silver"}, nil)
	p := opsAwaitPending(t, dir, nil)
	if r := opsApprovalsCLI(t, dir, nil, "approve", p.ID); r.code != 0 || !strings.Contains(r.stdout, "approved "+p.ID) {
		t.Fatalf("approvals approve through the daemon: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if res := receive(t, done); res.isErr {
		t.Errorf("approved call: %+v", res)
	}
	if err := os.WriteFile(filepath.Join(dir, "admin.token"), []byte("not-the-admin-token-at-all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := opsApprovalsCLI(t, dir, nil, "list"); r.code != 1 || !strings.Contains(r.stderr, "401") {
		t.Errorf("with a wrong token file: exit %d, want the daemon's 401\n%s%s", r.code, r.stdout, r.stderr)
	}
}
