package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpsShortTokenRefused: an agent token (or admin token) shorter than
// 16 bytes stops the gateway at load, naming file:line:col and how to make
// a proper one; a reload to such a token is refused and the old one stays.
func TestOpsShortTokenRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  admin_token: {env: OPS_ADMIN}
agents:
  - id: ci
    token: {env: CI_TOKEN}
`)
	for _, tc := range []struct {
		name, env, want string
	}{
		{"one-character agent token", "CI_TOKEN=x", ws + `:6:12: agent "ci"'s token (from environment variable CI_TOKEN) is 1 bytes`},
		{"fifteen bytes", "CI_TOKEN=123456789012345", `is 15 bytes; a bearer token must be at least 16 bytes`},
		{"short admin token", "OPS_ADMIN=admin", ws + `:3:16: gateway.admin_token (from environment variable OPS_ADMIN) is 5 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"CI_TOKEN=ci-token-0123456789abcdef", "OPS_ADMIN=ops-admin-0123456789abcdef", tc.env}
			r := toolgate(t, dir, env, "serve", "-w", ws, "--listen", "127.0.0.1:0")
			if r.code != 1 {
				t.Fatalf("serve with a short token: exit %d, want 1; stderr:\n%s", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "openssl rand -hex 32") {
				t.Errorf("stderr lacks %q and how to fix it:\n%s", tc.want, r.stderr)
			}
		})
	}
}

// TestOpsShortTokenReload: a reload whose agent token became short is
// refused, /admin/status says why, and the token in force still works.
func TestOpsShortTokenReload(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	body := `version: 1
gateway:
  admin_token: {env: OPS_ADMIN}
agents:
  - id: ci
    token: {env: %s}
`
	ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(body, "%s", "CI_TOKEN"))
	env := []string{"CI_TOKEN=ci-token-0123456789abcdef", "SHORT=abc", "OPS_ADMIN=" + adminToken}
	d := startDaemon(t, env, "-w", ws)
	replaceFile(t, ws, []byte(strings.ReplaceAll(body, "%s", "SHORT")))
	var st struct {
		Reload struct {
			Error string `json:"error"`
		} `json:"reload"`
	}
	waitFor(t, 20*time.Second, "the refused reload in /admin/status", func() bool {
		st.Reload.Error = ""
		adminJSON(t, d, "GET", "/admin/status", &st)
		return st.Reload.Error != ""
	})
	if want := filepath.Base(ws) + `:6:12: agent "ci"'s token (from environment variable SHORT) is 3 bytes`; !strings.Contains(st.Reload.Error, want) {
		t.Errorf("reload error %q lacks %q", st.Reload.Error, want)
	}
	if code := toolgateHTTPStatus(t, d.base+"/mcp/nothing", "ci-token-0123456789abcdef"); code == 401 {
		t.Errorf("the token in force was dropped by a refused reload (HTTP %d)", code)
	}
}

// TestOpsAdminTokenUnsetWarns: a daemon without gateway.admin_token says
// at start that the admin API and console are off, and how to turn them on.
func TestOpsAdminTokenUnsetWarns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", "version: 1\nagents:\n  - id: ci\n    token: {env: CI_TOKEN}\n")
	_, logs := startLoggedDaemon(t, []string{"CI_TOKEN=ci-token-0123456789abcdef"}, "-w", ws)
	rec := logLine(logs, "gateway.admin_token is not set")
	if rec == nil {
		t.Fatalf("no warning that gateway.admin_token is unset in:\n%s", strings.Join(logs.lines, "\n"))
	}
	if rec["level"] != "WARN" || !strings.Contains(rec["msg"].(string), "gateway.admin_token: {env: NAME}") {
		b, _ := json.Marshal(rec)
		t.Errorf("warning %s: want WARN naming how to set it", b)
	}
}

// logLine is the first of l's JSON log lines whose msg contains part.
func logLine(l *logged, part string) map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.lines {
		var rec map[string]any
		if json.Unmarshal([]byte(s), &rec) == nil {
			if m, _ := rec["msg"].(string); strings.Contains(m, part) {
				return rec
			}
		}
	}
	return nil
}
