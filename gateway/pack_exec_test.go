package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/packs"
)

func TestToolResult(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		res     packs.Result
		isError bool
		want    []string
	}{
		{"plain", packs.Result{Stdout: []byte("hello\n")}, false, []string{"hello"}},
		{"truncated", packs.Result{Stdout: []byte("abc"), Truncated: true, CutBytes: 99, Err: "output cap"}, false,
			[]string{"abc", "cut after 3 bytes", "at least 99 more bytes"}},
		{"parse note", packs.Result{Stdout: []byte("x y"), ParseNote: "output was not valid JSON"}, false, []string{"x y", "[output was not valid JSON]"}},
		{"failure", packs.Result{ExitCode: 3, Err: "exit status 3", StderrTail: "jq: error\n"}, true, []string{"p:m failed: exit status 3", "jq: error"}},
	}
	for _, tc := range cases {
		got := toolResult("p", "m", &tc.res)
		if got.IsError != tc.isError {
			t.Errorf("%s: isError = %v", tc.name, got.IsError)
		}
		for _, w := range tc.want {
			if !strings.Contains(got.Text, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got.Text, w)
			}
		}
	}
}

func TestCallPackRunsInWorkspaceDir(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	res := callPack(t, g, "reader", "json-tools", "query", map[string]any{"filter": ".a", "file": "d.json"})
	if res.IsError || strings.TrimSpace(resultText(res)) != "1" {
		t.Fatalf("query: %q isError %v", resultText(res), res.IsError)
	}
}

// TestAuditFailureFailsTheCall: a call whose audit event cannot be written
// is refused, whatever it did, and says why.
func TestAuditFailureFailsTheCall(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /dev/full: the disk-full case needs it (any Linux has it)")
		}
		t.Skip("no /dev/full on this system")
	}
	g := openTestGateway(t, "/dev/full")
	for _, member := range []string{"query", "edit-in-place"} {
		res := callPack(t, g, "reader", "json-tools", member, map[string]any{"filter": ".a", "file": "d.json"})
		if !res.IsError || !strings.Contains(resultText(res), "DENIED: the audit log could not be written") {
			t.Errorf("%s with an unwritable audit: %q, want a refusal naming the audit", member, resultText(res))
		}
	}
}

// TestNoSideEffectsWhileAuditFails: with the write-ahead decision event, a
// call whose decision cannot be recorded never runs — neither the call
// that discovers the failing audit nor any after it.
func TestNoSideEffectsWhileAuditFails(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no /dev/full: the disk-full case needs it (any Linux has it)")
		}
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(`version: 1
command_packs:
  - id: files
    permission: open
    commands:
      - id: touch
        argv: [touch, "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path]}
agents:
  - id: a
    grants: [tool:files:touch]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Open(context.Background(), ws, Options{Getenv: os.Getenv, AuditPath: "/dev/full"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, name := range []string{"first", "second", "third"} {
		res := callPack(t, g, "a", "files", "touch", map[string]any{"path": name})
		if !res.IsError || !strings.Contains(resultText(res), "audit log") {
			t.Errorf("%s call with a failing audit: %q", name, resultText(res))
		}
	}
	for _, name := range []string{"first", "second", "third"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s ran although the audit was already failing", name)
		}
	}
}
