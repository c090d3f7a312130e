package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// TestClaudeCodeHTTP runs Claude Code against the shared daemon with the
// http config mcp-config prints: the agent's token reaches toolgate only
// through the ${READER_TOKEN} reference Claude Code expands in headers.
func TestClaudeCodeHTTP(t *testing.T) {
	t.Parallel()
	claude := claudeBinary(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl}
  approvals: {wait: 1s, ttl: 10m}
command_packs:
  - use: bundled/json-tools
    permission_overrides:
      edit-in-place: strict
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants: [pack:json-tools, json-tools-edit-in-place]
`)
	data := writeFile(t, dir, "data.json", `{"name":"toolgate"}`)
	const token = "reader-token-e2e"
	d := startDaemon(t, []string{"READER_TOKEN=" + token}, "-w", ws)

	cfg := toolgate(t, dir, nil, "mcp-config", "-w", ws, "--agent", "reader", "--harness", "claude", "--mode", "http", "--url", d.base)
	if cfg.code != 0 || strings.Contains(cfg.stdout, token) || !strings.Contains(cfg.stdout, "Bearer ${READER_TOKEN}") {
		t.Fatalf("mcp-config --mode http: exit %d\n%s%s", cfg.code, cfg.stdout, cfg.stderr)
	}
	mcpConfig := writeFile(t, dir, "mcp.json", cfg.stdout)
	al := toolgate(t, dir, nil, "mcp-config", "-w", ws, "--agent", "reader", "--harness", "claude", "--allowed-tools")

	model := scriptedmodel.Start(scriptedmodel.Options{MainTool: "mcp__json-tools__query", Turns: []scriptedmodel.Turn{
		{{Name: "mcp__json-tools__query", Input: map[string]any{"filter": ".name", "file": data}},
			{Name: "mcp__json-tools__edit-in-place", Input: map[string]any{"filter": ".name = 1", "file": data}}},
	}})
	t.Cleanup(model.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Read data.json.", "--output-format", "json",
		"--mcp-config", mcpConfig, "--strict-mcp-config", "--allowed-tools", strings.TrimSpace(al.stdout))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=dummy", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false", "READER_TOKEN=" + token}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	var res claudeResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil || res.IsError {
		t.Fatalf("claude output: %v\n%s", err, stdout.String())
	}
	byID := map[string]scriptedmodel.ToolResult{}
	for _, r := range model.Results() {
		byID[r.ToolUseID] = r
	}
	if r := byID["toolu_00_00"]; r.IsError || strings.TrimSpace(r.Text) != `"toolgate"` {
		t.Errorf("granted read over HTTP: %+v", r)
	}
	if r := byID["toolu_00_01"]; !r.IsError || !strings.HasPrefix(r.Text, "DENIED: approval") {
		t.Errorf("strict write over HTTP: %+v", r)
	}
	var got []string
	for _, ev := range readClaudeAudit(t, filepath.Join(dir, "audit.jsonl")) {
		got = append(got, ev.Agent+" "+ev.Action+" "+ev.Decision)
	}
	// The two calls of one turn may run concurrently: compare as a set.
	sort.Strings(got)
	want := "reader command:call:json-tools:edit-in-place approval|reader command:call:json-tools:query allow|reader command:call:json-tools:query completed"
	if strings.Join(got, "|") != want {
		t.Errorf("audit = %q, want %q", strings.Join(got, "|"), want)
	}
}
