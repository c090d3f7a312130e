package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestCheckReportsEveryProblem: independent mistakes are reported together,
// each once, in file order; what depends on a broken declaration is left
// out.
func TestCheckReportsEveryProblem(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(`version: 1
command_packs:
  - id: tools
    requires:
      - {binary: no-such-binary-for-toolgate}
    commands:
      - id: run
        argv: [no-such-binary-for-toolgate]
        inputs: {type: object}
agents:
  - {id: a, grants: ["tool:missing:x"]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, policy, err := Check(context.Background(), path)
	if err == nil || ws != nil || policy != nil {
		t.Fatalf("Check = %v, %v, %v", ws, policy, err)
	}
	list := workspace.AsList(err)
	msg := err.Error()
	if len(list) < 2 || !strings.Contains(msg, "no-such-binary-for-toolgate") || !strings.Contains(msg, "missing") {
		t.Fatalf("%d problems: %v", len(list), err)
	}
	if strings.Index(msg, "no-such-binary") > strings.Index(msg, "tool:missing") {
		t.Errorf("problems out of file order: %v", err)
	}
}

func TestCheckGood(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(pipelineWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, policy, err := Check(context.Background(), path)
	if err != nil || ws == nil || policy == nil || len(policy.Tools("reader", "json-tools")) == 0 {
		t.Fatalf("Check = %v, %v, %v", ws, policy, err)
	}
}
