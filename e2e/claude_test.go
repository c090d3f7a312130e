package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// claudeBinary returns the Claude Code CLI installed by
// scripts/ci-deps/claude-code.sh under e2e/.cache (see harnessCLI: under
// CI=true a missing CLI fails the test).
func claudeBinary(t *testing.T) string {
	t.Helper()
	return harnessCLI(t, "claude-code", "claude", "claude-code.sh")
}

// claudeResult is the part of `claude -p --output-format json` we read.
type claudeResult struct {
	IsError           bool   `json:"is_error"`
	Result            string `json:"result"`
	NumTurns          int    `json:"num_turns"`
	PermissionDenials []struct {
		ToolName  string         `json:"tool_name"`
		ToolUseID string         `json:"tool_use_id"`
		ToolInput map[string]any `json:"tool_input"`
	} `json:"permission_denials"`
}

// claudeAudit is one audit line, as far as this test reads it.
type claudeAudit struct {
	Agent    string `json:"agent"`
	Action   string `json:"action"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

func readClaudeAudit(t *testing.T, path string) []claudeAudit {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []claudeAudit
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev claudeAudit
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, ev)
	}
	return out
}

// TestClaudeCode runs the real Claude Code CLI against toolgate, configured
// only by what `toolgate mcp-config --harness claude` prints (the MCP config
// and the --allowed-tools list derived from the grant), with a scripted
// model on loopback making the tool calls. It checks, from Claude's own
// JSON output, the results the model received and the audit: a granted
// read works, an injection filter stays an inert argument, a strict write
// is held for approval, and a tool outside the grant is refused by the
// harness and, called around it, by toolgate.
func TestClaudeCode(t *testing.T) {
	t.Parallel()
	claude := claudeBinary(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl}
  approvals: {wait: 1s, ttl: 10m}
command_packs:
  - use: bundled/json-tools
    permission: cautious
    permission_overrides:
      edit-in-place: strict
  - id: notes
    commands:
      - id: list
        argv: [ls, -1, "{dir}"]
        inputs: {type: object, properties: {dir: {type: string}}, required: [dir]}
        effects: read
      - id: remove
        argv: [rm, --, "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path]}
        effects: write
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants:
      - pack:json-tools
      - pack:notes
      - json-tools-edit-in-place
`)
	data := writeFile(t, dir, "data.json", `{"name":"toolgate","items":[1,2]}`)
	victim := writeFile(t, dir, "notes/keep.txt", "keep me")
	outside := filepath.Join(dir, "outside.txt")

	cfg := toolgate(t, dir, nil, "mcp-config", "-w", ws, "--agent", "reader", "--harness", "claude")
	if cfg.code != 0 {
		t.Fatalf("mcp-config: %s", cfg.stderr)
	}
	mcpConfig := writeFile(t, dir, "mcp.json", cfg.stdout)
	al := toolgate(t, dir, nil, "mcp-config", "-w", ws, "--agent", "reader", "--harness", "claude", "--allowed-tools")
	if al.code != 0 {
		t.Fatalf("mcp-config --allowed-tools: %s", al.stderr)
	}
	allowed := strings.TrimSpace(al.stdout)
	wantAllowed := "mcp__json-tools__query,mcp__json-tools__keys,mcp__json-tools__validate,mcp__notes__list,mcp__json-tools__edit-in-place"
	if allowed != wantAllowed {
		t.Fatalf("derived --allowed-tools = %s, want %s", allowed, wantAllowed)
	}

	model := scriptedmodel.Start(scriptedmodel.Options{MainTool: "mcp__json-tools__query", FinalText: "all done", Turns: []scriptedmodel.Turn{
		{{Name: "mcp__json-tools__query", Input: map[string]any{"filter": ".name", "file": data}}},
		{{Name: "mcp__json-tools__query", Input: map[string]any{"filter": "; rm -rf /", "file": data}}},
		{{Name: "mcp__json-tools__edit-in-place", Input: map[string]any{"filter": ".name = \"pwned\"", "file": data}}},
		{{Name: "Write", Input: map[string]any{"file_path": outside, "content": "x"}}},
		{{Name: "mcp__notes__remove", Input: map[string]any{"path": victim}}},
	}})
	t.Cleanup(model.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Use the JSON tools on data.json.", "--output-format", "json",
		"--mcp-config", mcpConfig, "--strict-mcp-config", "--allowed-tools", allowed)
	cmd.Dir = dir
	home := t.TempDir()
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TMPDIR=" + os.TempDir(),
		"ANTHROPIC_BASE_URL=" + model.URL, "ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		// MCP tools listed up front, not behind the tool-search tool, so the
		// scripted model can call them by name in its first turn.
		"ENABLE_TOOL_SEARCH=false",
	}
	cmd.Env = append(cmd.Env, coverEnv()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude: %v\nstdout: %s\nstderr: %s\nmodel saw: %v", err, stdout.String(), stderr.String(), model.Requests())
	}
	var res claudeResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("claude output is not JSON: %v\n%s", err, stdout.String())
	}
	if res.IsError || res.Result != "all done" {
		t.Errorf("claude result: is_error %v, result %q", res.IsError, res.Result)
	}

	// The model was offered exactly the granted tools of toolgate.
	var offered []string
	for _, set := range model.ToolSets() {
		if slices.Contains(set, "mcp__json-tools__query") {
			offered = set
		}
	}
	for _, want := range strings.Split(allowed, ",") {
		if !slices.Contains(offered, want) {
			t.Errorf("the model was not offered %s; offered %v", want, offered)
		}
	}
	if slices.Contains(offered, "mcp__notes__remove") {
		t.Errorf("the model was offered mcp__notes__remove, which the grant does not hold")
	}

	results := map[string]scriptedmodel.ToolResult{}
	for _, r := range model.Results() {
		results[r.ToolUseID] = r
	}
	if len(results) != 5 {
		t.Fatalf("the model received %d tool results, want 5: %+v", len(results), model.Results())
	}
	// jq prints the JSON string "toolgate"; toolgate's result carries it
	// as structuredContent {"result": "toolgate"} too (docs/harnesses.md),
	// which is what Claude Code hands its model.
	if r := results["toolu_00_00"]; r.IsError || strings.TrimSpace(r.Text) != `{"result":"toolgate"}` {
		t.Errorf("granted read: %+v, want jq's \"toolgate\" as {\"result\":\"toolgate\"}", r)
	}
	if r := results["toolu_01_00"]; !r.IsError || !strings.Contains(r.Text, "jq: error") || !strings.Contains(r.Text, "; rm -rf /") {
		t.Errorf("injection filter: %+v, want jq's syntax error about the literal filter", r)
	}
	if r := results["toolu_02_00"]; !r.IsError || !strings.HasPrefix(r.Text, "DENIED: approval") {
		t.Errorf("strict write: %+v, want a DENIED: approval … refusal", r)
	}
	if r := results["toolu_03_00"]; !r.IsError {
		t.Errorf("Write outside the allowlist: %+v, want refused by the harness", r)
	}
	if r := results["toolu_04_00"]; !r.IsError || !strings.Contains(r.Text, "No such tool") {
		t.Errorf("ungranted toolgate tool through the harness: %+v, want unknown to the harness", r)
	}
	denied := false
	for _, d := range res.PermissionDenials {
		if d.ToolName == "Write" && d.ToolUseID == "toolu_03_00" {
			denied = true
		}
	}
	if !denied {
		t.Errorf("permission_denials = %+v, want the Write outside the allowlist", res.PermissionDenials)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("%s exists: the refused Write ran (%v)", outside, err)
	}
	if b, _ := os.ReadFile(data); !strings.Contains(string(b), `"toolgate"`) {
		t.Errorf("data.json changed: %s", b)
	}

	// Around the harness: the same identity calling the ungranted tool
	// directly is refused by toolgate itself.
	cl := mcpStdio(t, nil, "serve", "-w", ws, "--agent", "reader", "--stdio", "--surface", "notes")
	text, isErr, _, err := call(t, cl, "remove", map[string]any{"path": victim})
	if err == nil && !isErr {
		t.Errorf("direct call of notes:remove as reader succeeded: %q", text)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("%s was removed: %v", victim, err)
	}

	var got []string
	for _, ev := range readClaudeAudit(t, filepath.Join(dir, "audit.jsonl")) {
		if ev.Agent != "reader" {
			t.Errorf("audit event for agent %q: %+v", ev.Agent, ev)
		}
		got = append(got, ev.Action+" "+ev.Decision)
	}
	want := []string{
		// Write-ahead: each call that runs is a decision, then its outcome.
		"command:call:json-tools:query allow",
		"command:call:json-tools:query completed",
		"command:call:json-tools:query allow",
		"command:call:json-tools:query failed", // the injection attempt: jq's syntax error
		"command:call:json-tools:edit-in-place approval",
		"command:call:notes:remove deny",
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if v := toolgate(t, dir, nil, "audit", "verify", filepath.Join(dir, "audit.jsonl")); v.code != 0 {
		t.Errorf("audit verify: %s%s", v.stdout, v.stderr)
	}
}
