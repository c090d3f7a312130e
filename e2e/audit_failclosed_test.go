package e2e

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const failClosedWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  admin_token: {env: TG_ADMIN_TOKEN}
command_packs:
  - id: echo
    permission: open
    commands:
      - id: say
        argv: [ARGVECHO, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: read
agents:
  - id: writer
    token: {env: WRITER_TOKEN}
    grants: [pack:echo]
`

// auditStatus fetches the audit part of GET /admin/status.
func auditStatus(t *testing.T, d *daemon) (ok bool, msg string) {
	t.Helper()
	req, _ := http.NewRequest("GET", d.base+"/admin/status", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Audit struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		} `json:"audit"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.Audit.OK, st.Audit.Error
}

// TestAuditFailClosed: when the audit log cannot take an event — the disk
// is full, or its last line was damaged (not merely torn by a crash, which
// the log moves aside by itself) — calls fail with a reason that says so,
// and the status API shows the audit failing.
func TestAuditFailClosed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// before runs before the daemon starts; after once it is up.
		before, after func(t *testing.T, log string)
		want          string
	}{
		{
			name: "disk full",
			before: func(t *testing.T, log string) {
				if _, err := os.Stat("/dev/full"); err != nil {
					if os.Getenv("CI") != "" {
						t.Fatal("no /dev/full: the disk-full case needs it (any Linux has it)")
					}
					t.Skip("no /dev/full on this system")
				}
				if err := os.Symlink("/dev/full", log); err != nil {
					t.Fatal(err)
				}
			},
			after: func(*testing.T, string) {},
			want:  "no space left on device",
		},
		{
			name:   "damaged last line",
			before: func(*testing.T, string) {},
			after: func(t *testing.T, log string) {
				f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if _, err := f.WriteString(`{"seq":2,"time":"2026-01-01T00:00:00Z","agent":"written by hand"}` + "\n"); err != nil {
					t.Fatal(err)
				}
			},
			want: "audit log is damaged",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(failClosedWorkspace, "ARGVECHO", argvEcho))
			log := filepath.Join(dir, "audit.jsonl")
			c.before(t, log)
			d := startDaemon(t, approvalsEnv, "-w", ws)
			cl := mcpHTTP(t, d.base+"/mcp/echo", writerToken)
			if c.name == "damaged last line" {
				// One good event first, so the damage is after a valid chain.
				if text, isErr, _, _ := call(t, cl, "say", map[string]any{"n": "1"}); isErr {
					t.Fatalf("first call: %s", text)
				}
			}
			if ok, msg := auditStatus(t, d); !ok {
				t.Fatalf("status before any failure: audit not ok: %s", msg)
			}
			c.after(t, log)

			text, isErr, _, err := call(t, cl, "say", map[string]any{"n": "2"})
			if err != nil || !isErr || !strings.HasPrefix(text, "DENIED: the audit log could not be written, so the call is refused") || !strings.Contains(text, c.want) {
				t.Errorf("call with a failing audit: %q (isError %v, err %v), want a DENIED naming %q", text, isErr, err, c.want)
			}
			ok, msg := auditStatus(t, d)
			if ok || !strings.Contains(msg, c.want) {
				t.Errorf("status after the failure: ok=%v error %q, want not ok naming %q", ok, msg, c.want)
			}
		})
	}
}
