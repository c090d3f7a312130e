package grantcheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// writeWorkspace writes yaml as toolgate.yaml in a fresh directory and
// returns its path.
func writeWorkspace(t testing.TB, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(strings.TrimLeft(yaml, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// compileYAML loads and compiles a workspace, failing the test on error.
func compileYAML(t testing.TB, yaml string) *Policy {
	t.Helper()
	p, err := compileErr(t, yaml)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return p
}

func compileErr(t testing.TB, yaml string) (*Policy, error) {
	t.Helper()
	ws, err := workspace.Load(writeWorkspace(t, yaml))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return Compile(ws)
}

func TestCompileDemoWorkspace(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Load("../examples/command-packs/toolgate.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		agent, tool string
		args        map[string]any
		want        Outcome
	}{
		{"reader", "json-tools:query", map[string]any{"filter": ".", "file": "a.json"}, Allow},
		{"reader", "json-tools:edit-in-place", map[string]any{"filter": ".", "file": "a.json"}, Deny},
		{"editor", "json-tools:edit-in-place", map[string]any{"filter": ".", "file": "a.json"}, Approval},
		{"reader", "notes:remove", map[string]any{"path": "x"}, Deny},
		{"reader", "notes:list", map[string]any{"dir": "."}, Allow},
	}
	for _, tt := range tests {
		s, m, _ := strings.Cut(tt.tool, ":")
		if d := p.Decide(tt.agent, s, m, tt.args); d.Outcome != tt.want {
			t.Errorf("%s %s: got %s (%s), want %s", tt.agent, tt.tool, d.Outcome, d.Reason, tt.want)
		}
	}
}
