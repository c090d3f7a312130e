package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/state/pgtest"
)

// TestApprovalsStoreCLI: a call held by a gateway process (a broker on the
// workspace's store) is listed and approved by `toolgate approvals -w`,
// which needs no daemon; the held call wakes and runs, and the decision is
// in the audit once. Embedded and PostgreSQL stores alike.
func TestApprovalsStoreCLI(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"embedded", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			yaml := "version: 1\ngateway:\n  audit: {path: audit.jsonl}\n"
			env := map[string]string{}
			if backend == "postgres" {
				cl := pgtest.Need(t)
				env["FLEET_DSN"] = cl.NewDatabase(t)
				yaml += "  state: {postgres: {dsn: {env: FLEET_DSN}}}\n"
			}
			ws := filepath.Join(dir, "toolgate.yaml")
			if err := os.WriteFile(ws, []byte(yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			st, err := state.Open(ctx, state.Config{Dir: filepath.Join(dir, ".toolgate"), DSN: env["FLEET_DSN"]})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			b := approvals.New(approvals.Options{Store: st})
			defer b.Close()
			key := approvals.Key{Agent: "writer", Action: "command:call:vault:stash", ArgsSHA256: audit.ArgsDigest(nil), Revision: "r1"}
			held := make(chan approvals.Result, 1)
			opened := make(chan struct{})
			go func() {
				held <- b.Wait(ctx, key, approvals.Info{Arguments: json.RawMessage(`{"item":"gold"}`)}, approvals.WaitOptions{Wait: time.Minute,
					Opened: func(approvals.Request) { close(opened) }})
			}()
			<-opened
			run := func(args ...string) (int, string, string) {
				var stdout, stderr bytes.Buffer
				c, _, _ := auditCLI(env)
				c.stdout, c.stderr = &stdout, &stderr
				code := c.main(ctx, append([]string{"approvals", "-w", ws}, args...))
				return code, stdout.String(), stderr.String()
			}
			code, out, errOut := run("list", "--format", "json")
			var list []listed
			if code != exitOK || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 || list[0].Agent != "writer" || !strings.Contains(string(list[0].Arguments), `"gold"`) {
				t.Fatalf("list: %d %s %s", code, out, errOut)
			}
			if code, out, errOut := run("approve", list[0].ID); code != exitOK || !strings.Contains(out, "approved "+list[0].ID) {
				t.Fatalf("approve: %d %s %s", code, out, errOut)
			}
			if res := <-held; res.Outcome != approvals.Granted || res.Request.ID != list[0].ID {
				t.Fatalf("held call after the CLI approved: %+v", res)
			}
			if code, _, errOut := run("approve", list[0].ID); code != exitFail || !strings.Contains(errOut, "no longer pending") {
				t.Errorf("second approve: %d %s", code, errOut)
			}
			if code, _, errOut := run("deny", "ap-unknown"); code != exitFail || !strings.Contains(errOut, "no such approval request") {
				t.Errorf("deny unknown: %d %s", code, errOut)
			}
			if code, _, errOut := run("approve", list[0].ID, "--server", "http://x"); code != exitUsage {
				t.Errorf("flags of the admin mode in store mode: %d %s", code, errOut)
			}
			// The decision is in the workspace's audit, once.
			var trail bytes.Buffer
			c, _, stderr := auditCLI(env)
			c.stdout = &trail
			if code := c.main(ctx, []string{"audit", "export", "-w", ws}); code != exitOK {
				t.Fatalf("export: %s", stderr)
			}
			if n := strings.Count(trail.String(), `"decision":"approved"`); n != 1 || !strings.Contains(trail.String(), list[0].ID) {
				t.Errorf("audit holds %d approved events:\n%s", n, trail.String())
			}
		})
	}
}
