package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProxyApprovals: a proxied write goes through the same approval broker
// as a pack command — a rule approves a cautious write (which then reaches
// the server), while an unruled one stays pending and never does.
func TestProxyApprovals(t *testing.T) {
	httpURL := startConfHTTP(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  approvals:
    wait: 10ms
    rules:
      - {agent: writer, capability: "tool:confhttp:echo"}
mcp_servers:
  - id: confhttp
    url: `+httpURL+`
    permission: cautious
    effects: {calls: read}
agents:
  - id: writer
    token: {env: WRITER_TOKEN}
    grants: [tool:confhttp:echo, tool:confhttp:calls, tool:confhttp:delete_all]
`)
	d := startDaemon(t, []string{"WRITER_TOKEN=wt-0123456789abcdef"}, "-w", ws)
	s := rawConnect(t, d.base+"/mcp/confhttp", "wt-0123456789abcdef")
	defer s.close()

	before, _ := s.callText("calls", nil)
	if text, isErr := s.callText("echo", map[string]any{"text": "ruled"}); isErr || text != "ruled" {
		t.Errorf("rule-approved write = %q (isError %v), want it to reach the server", text, isErr)
	}
	if text, isErr := s.callText("delete_all", nil); !isErr || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Errorf("unruled write = %q, want DENIED: approval pending", text)
	}
	after, _ := s.callText("calls", nil)
	if !countsDiffer(before, after, 2) {
		t.Errorf("server calls went %s → %s; want only echo and calls to reach it", before, after)
	}
	log, err := os.ReadFile(filepath.Join(filepath.Dir(ws), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), `"by":"rule:1"`) {
		t.Errorf("audit does not record the rule approval:\n%s", log)
	}
}
