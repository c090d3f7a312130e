package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// failingServer is a stdio "server" that, while flag exists, writes 25
// lines of boot noise and then the real cause on stderr and exits 1 (a
// Node.js server missing a module does the like); otherwise it execs the
// recorder, a working MCP server.
func failingServer(t *testing.T, flag string) string {
	t.Helper()
	rec := recorderBinary(t)
	script := fmt.Sprintf(`if [ -e %q ]; then i=1; while [ $i -le 25 ]; do echo "boot line $i" >&2; i=$((i+1)); done; echo "Error: Cannot find module 'left-pad'" >&2; exit 1; fi; exec %q -impl mcpgo -stdio -record %q`,
		flag, rec, filepath.Join(filepath.Dir(flag), "records.jsonl"))
	return fmt.Sprintf("[/bin/sh, -c, %q]", script)
}

const opsDownstreamWorkspace = `version: 1
gateway:
  admin_token: {env: OPS_ADMIN}
mcp_servers:
  - id: broken
    command: COMMAND
    permission: open
    effects: {echo: read, leak: read}
agents:
  - id: dev
    token: {env: DEV_TOKEN}
    grants: [server:broken]
  - id: other
    token: {env: OTHER_TOKEN}
    grants: []
`

var opsDownstreamEnv = []string{"OPS_ADMIN=" + adminToken, "DEV_TOKEN=dev-token-0123456789abcdef", "OTHER_TOKEN=other-token-0123456789abcdef"}

// TestOpsDownstreamFailsToStart: a stdio server that cannot start is
// explained by its last 20 stderr lines — to the agent granted it (which
// server, and why, not "no such endpoint"), in /admin/status and in the
// log — while an agent granted nothing there still learns nothing.
func TestOpsDownstreamFailsToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := writeFile(t, dir, "fail", "")
	ws := writeFile(t, dir, "toolgate.yaml", strings.Replace(opsDownstreamWorkspace, "COMMAND", failingServer(t, flag), 1))
	d, logs := startLoggedDaemon(t, opsDownstreamEnv, "-w", ws)

	const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`
	post := func(token string) (int, string) {
		code, _, body := postMCP(t, d.base+"/mcp/broken", token, initBody)
		return code, body
	}
	code, body := post("dev-token-0123456789abcdef")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, `MCP server unavailable: "broken"`) || !strings.Contains(body, "Cannot find module 'left-pad'") {
		t.Errorf("granted agent: HTTP %d %q, want 503 naming the server and the cause", code, body)
	}
	if !strings.Contains(body, "| boot line 7\n") || strings.Contains(body, "| boot line 6\n") {
		t.Errorf("granted agent's answer does not hold exactly the last 20 stderr lines:\n%s", body)
	}
	if code, body := post("other-token-0123456789abcdef"); code != http.StatusNotFound || strings.Contains(body, "left-pad") {
		t.Errorf("agent granted nothing there: HTTP %d %q, want the 404 that discloses nothing", code, body)
	}

	var st struct {
		Downstream []struct {
			ID     string   `json:"id"`
			State  string   `json:"state"`
			Error  string   `json:"error"`
			Stderr []string `json:"stderr"`
		} `json:"downstream"`
	}
	adminJSON(t, d, "GET", "/admin/status", &st)
	found := false
	for _, s := range st.Downstream {
		if s.ID != "broken" {
			continue
		}
		found = true
		if s.State != "failed" || len(s.Stderr) != 20 || s.Stderr[0] != "boot line 7" || s.Stderr[19] != "Error: Cannot find module 'left-pad'" {
			b, _ := json.MarshalIndent(s, "", "  ")
			t.Errorf("/admin/status of the broken server: %s", b)
		}
	}
	if !found {
		t.Errorf("/admin/status has no downstream entry for broken: %+v", st)
	}
	waitFor(t, 10*time.Second, "the cause in the log", func() bool {
		// Whichever step found it: the probe of its eras, or the listing.
		for _, msg := range []string{"could not reach an MCP server", "could not list an MCP server's tools"} {
			if rec := logLine(logs, msg); rec != nil && strings.Contains(fmt.Sprint(rec["err"]), "| Error: Cannot find module 'left-pad'") {
				return true
			}
		}
		return false
	})
}

// TestOpsDownstreamRestartBacksOff: a server that dies and then cannot
// start again is retried with a growing wait, never logged "restored"
// until a restart answers; a call meanwhile is told which server failed
// and why; once it can start, it is restored and calls work again.
func TestOpsDownstreamRestartBacksOff(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := filepath.Join(dir, "fail")
	ws := writeFile(t, dir, "toolgate.yaml", strings.Replace(opsDownstreamWorkspace, "COMMAND", failingServer(t, flag), 1))
	d, logs := startLoggedDaemon(t, opsDownstreamEnv, "-w", ws)
	cl := mcpHTTP(t, d.base+"/mcp/broken", "dev-token-0123456789abcdef")
	if text, isErr, _, err := call(t, cl, "echo", map[string]any{"x": "before"}); err != nil || isErr {
		t.Fatalf("echo before: %q %v %v", text, isErr, err)
	}
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, _ = call(t, cl, "leak", map[string]any{"how": "crash"})

	failedAt := func() []time.Time {
		logs.mu.Lock()
		defer logs.mu.Unlock()
		var at []time.Time
		for _, s := range logs.lines {
			var rec struct {
				Time time.Time `json:"time"`
				Msg  string    `json:"msg"`
			}
			if json.Unmarshal([]byte(s), &rec) == nil && rec.Msg == "mcp server restart failed" {
				at = append(at, rec.Time)
			}
		}
		return at
	}
	waitFor(t, 30*time.Second, "four failed restarts", func() bool { return len(failedAt()) >= 4 })
	at := failedAt()
	for i := 1; i < len(at); i++ {
		if gap, least := at[i].Sub(at[i-1]), 200*time.Millisecond<<(i-1); gap < least*9/10 {
			t.Errorf("restart %d came %s after the one before; want the wait to double (at least %s)", i+1, gap, least)
		}
	}
	if logLine(logs, "connection restored") != nil {
		t.Fatalf("logged restored while every restart failed:\n%s", strings.Join(logs.lines, "\n"))
	}
	text, isErr, _, err := call(t, cl, "echo", map[string]any{"x": "during"})
	got := text
	if err != nil {
		got = err.Error()
	}
	if !(isErr || err != nil) || !strings.Contains(got, `server "broken"`) || !strings.Contains(got, "Cannot find module 'left-pad'") {
		t.Errorf("a call while down was told %q (error %v), want which server failed and why", got, isErr || err != nil)
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the restored connection", func() bool { return logLine(logs, "connection restored") != nil })
	waitFor(t, 30*time.Second, "a call to work again", func() bool {
		_, isErr, _, err := call(t, cl, "echo", map[string]any{"x": "after"})
		return err == nil && !isErr
	})
}
