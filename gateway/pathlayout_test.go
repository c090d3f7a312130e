package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunnerRefusesMisplacedBound: a composed path_within layout that
// reaches the runner without the loader seeing it — the pack's command
// changed by code after the workspace was compiled — is refused at Prepare:
// the call is denied and audited, nothing runs, and the file outside the
// root (which `cat /dev/fd/3/../outside/x` would print) is in no result and
// no audit line.
func TestRunnerRefusesMisplacedBound(t *testing.T) {
	t.Parallel()
	const marker = "OUTSIDE-MARKER-gw-91c4"
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"toolgate.yaml": `version: 1
command_packs:
  - id: files
    commands:
      - id: cat
        argv: [cat, "--", "{dir}"]
        inputs: {type: object, properties: {dir: {type: string}, name: {type: string}}, required: [dir]}
        effects: read
agents:
  - id: reader
    grants:
      - op: tool:files:cat
        param_constraints: {dir: {path_within: data}}
`,
		"data/in.txt": "inside\n",
		"outside/x":   marker + "\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	g, err := Open(context.Background(), filepath.Join(dir, "toolgate.yaml"), Options{Getenv: os.Getenv, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if res := callPack(t, g, "reader", "files", "cat", map[string]any{"dir": "data/in.txt"}); res.IsError || resultText(res) != "inside\n" {
		t.Fatalf("the loaded layout: %q", resultText(res))
	}
	g.Workspace().CommandPacks[0].Commands[0].Argv = []string{"cat", "--", "{dir}/{name}"}
	res := callPack(t, g, "reader", "files", "cat", map[string]any{"dir": "data", "name": "../outside/x"})
	text := resultText(res)
	if !res.IsError || !strings.HasPrefix(text, DeniedPrefix) || !strings.Contains(text, `argv element 2 "{dir}/{name}": {dir} is bound by path_within`) || strings.Contains(text, marker) {
		t.Fatalf("the composed layout: %q (isError %v), want a refusal naming the element", text, res.IsError)
	}
	b, err := os.ReadFile(auditPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, `"decision":"deny"`) || !strings.Contains(last, `argv element 2`) || strings.Contains(last, `"exit"`) {
		t.Errorf("the refusal's audit event: %s", last)
	}
	if strings.Contains(string(b), marker) {
		t.Errorf("the audit log holds the outside file's content")
	}
}
