package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/packs"
)

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

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
			if !strings.Contains(resultText(got), w) {
				t.Errorf("%s: %q lacks %q", tc.name, resultText(got), w)
			}
		}
	}
}

const pipelineWorkspace = `version: 1
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    grants: [pack:json-tools]
`

func openTestGateway(t *testing.T, auditPath string) *Gateway {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(pipelineWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := Open(context.Background(), ws, Options{Getenv: os.Getenv, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func TestCallPackRunsInWorkspaceDir(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	res := g.callPack(context.Background(), "reader", g.surfaces["json-tools"], "query", map[string]any{"filter": ".a", "file": "d.json"})
	if res.IsError || strings.TrimSpace(resultText(res)) != "1" {
		t.Fatalf("query: %q isError %v", resultText(res), res.IsError)
	}
}

// TestAuditFailureFailsTheCall: a call whose audit event cannot be written
// is refused, whatever it did, and says why.
func TestAuditFailureFailsTheCall(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	g := openTestGateway(t, "/dev/full")
	for _, member := range []string{"query", "edit-in-place"} {
		res := g.callPack(context.Background(), "reader", g.surfaces["json-tools"], member, map[string]any{"filter": ".a", "file": "d.json"})
		if !res.IsError || !strings.Contains(resultText(res), "DENIED: the audit log could not be written") {
			t.Errorf("%s with an unwritable audit: %q, want a refusal naming the audit", member, resultText(res))
		}
	}
}
