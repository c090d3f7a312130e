package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const demoWorkspace = "../../examples/command-packs/toolgate.yaml"

// runGrantCLI runs toolgate in-process and returns exit code, stdout and
// stderr.
func runGrantCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	c := &cli{stdout: &stdout, stderr: &stderr, getenv: func(string) string { return "" }, log: slog.New(slog.DiscardHandler)}
	code := c.main(context.Background(), args)
	return code, stdout.String(), stderr.String()
}

func writeGrantFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(strings.TrimLeft(content, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestExplainText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"allow", []string{"--agent", "reader", "--tool", "json-tools:query", "--args", `{"filter":".","file":"a.json"}`}, []string{
			"agent reader calls json-tools:query",
			"1 identity     pass", "2 grant        pass     granted by pack:json-tools, which covers the pack's read commands; query is a read",
			"6 tier         pass     cautious tier: read allowed → allow", "7 pin          pass     no toolgate.lock", "8 approval     skipped",
			"decision: allow", "tier: cautious   effects: read   grant: pack:json-tools",
		}},
		{"deny not granted", []string{"--agent", "reader", "--tool", "tool:json-tools:edit-in-place", "--args", `{"filter":".","file":"a.json"}`}, []string{
			"2 grant        fail     pack:json-tools covers only the read commands", "3 scopes       skipped",
			"decision: deny", `reason:   unknown tool "json-tools:edit-in-place"`,
		}},
		{"approval strict via harness name", []string{"--agent", "editor", "--tool", "mcp__json-tools__edit-in-place", "--args", `{"filter":".","file":"a.json"}`}, []string{
			"granted by json-tools-edit-in-place (tool:json-tools:edit-in-place)", "decision: approval", "strict tier: write needs approval",
		}},
		{"schema failure", []string{"--agent", "reader", "--tool", "json-tools:query", "--args", `{"filter":"."}`}, []string{
			"4 schema       fail", "decision: deny", "missing property 'file'",
		}},
		{"default args", []string{"--agent", "reader", "--tool", "notes:list"}, []string{"decision: deny", "missing property 'dir'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runGrantCLI(t, append([]string{"explain", "-w", demoWorkspace}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d, stderr %s", code, errOut)
			}
			for _, w := range tt.wants {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestExplainJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runGrantCLI(t, "explain", "-w", demoWorkspace, "--agent", "reader", "--tool", "notes:remove", "--args", `{"path":"x"}`, "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	want := map[string]any{"decision": "deny", "reason": "readonly tier: write refused", "tier": "readonly", "effects": "write",
		"grant": "tool:notes:remove", "stage": "tier", "agent": "reader", "tool": "notes:remove"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if ms, ok := got["missing_scopes"].([]any); !ok || len(ms) != 0 {
		t.Errorf("missing_scopes = %#v, want []", got["missing_scopes"])
	}
	steps, _ := got["steps"].([]any)
	if len(steps) != 8 {
		t.Fatalf("steps = %v", got["steps"])
	}
	tier := steps[5].(map[string]any)
	if tier["stage"] != "tier" || tier["status"] != "fail" || steps[6].(map[string]any)["status"] != "skipped" {
		t.Errorf("steps %v", steps)
	}
}

// An MCP tool offline is judged on what the workspace declares.
func TestExplainMCPOffline(t *testing.T) {
	t.Parallel()
	ws := writeGrantFile(t, "toolgate.yaml", `
version: 1
mcp_servers:
  - id: neotoma
    url: https://neotoma.example/mcp
    permission: cautious
    effects: {retrieve_entities: read}
    scopes: [knowledge:read]
agents:
  - id: reader
    scopes: [knowledge:read]
    grants:
      - tool:neotoma:retrieve_entities
      - op: tool:neotoma:store
        param_constraints:
          entity_type: {enum: [note, contact]}
  - id: nobody
    grants: [tool:neotoma:retrieve_entities]
`)
	tests := []struct {
		agent, tool, args string
		decision          string
		reason            string
	}{
		{"reader", "neotoma:retrieve_entities", `{"query":"x"}`, "allow", "cautious tier: read allowed"},
		{"reader", "neotoma:store", `{"entity_type":"note"}`, "approval", "cautious tier: write needs approval"},
		{"reader", "neotoma:store", `{"entity_type":"secret"}`, "deny", `parameter "entity_type": "secret" is not one of ["note", "contact"]`},
		{"reader", "neotoma:delete", `{}`, "deny", `unknown tool "neotoma:delete"`},
		{"nobody", "neotoma:retrieve_entities", `{}`, "deny", "missing scopes: knowledge:read"},
	}
	for _, tt := range tests {
		code, out, errOut := runGrantCLI(t, "explain", "-w", ws, "--agent", tt.agent, "--tool", tt.tool, "--args", tt.args, "--format", "json")
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var got struct{ Decision, Reason string }
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatal(err)
		}
		if got.Decision != tt.decision || !strings.Contains(got.Reason, tt.reason) {
			t.Errorf("%s %s = %s %q, want %s %q", tt.agent, tt.tool, got.Decision, got.Reason, tt.decision, tt.reason)
		}
	}
	if _, out, _ := runGrantCLI(t, "explain", "-w", ws, "--agent", "reader", "--tool", "neotoma:store", "--args", `{"entity_type":"note"}`); !strings.Contains(out, "input schema unknown") {
		t.Errorf("the schema step should say it was not checked:\n%s", out)
	}
}

func TestExplainErrors(t *testing.T) {
	t.Parallel()
	broken := writeGrantFile(t, "toolgate.yaml", `
version: 1
agents:
  - id: bot
    grants:
      - tool:*
      - tool:nowhere:x
`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no agent", []string{"--tool", "json-tools:query"}, exitUsage, "--agent and --tool are required"},
		{"no tool", []string{"--agent", "reader"}, exitUsage, "--agent and --tool are required"},
		{"bad JSON", []string{"--agent", "reader", "--tool", "json-tools:query", "--args", `{"file":`}, exitUsage, "--args: not valid JSON"},
		{"not an object", []string{"--agent", "reader", "--tool", "json-tools:query", "--args", `[1]`}, exitUsage, "--args: must be a JSON object"},
		{"two values", []string{"--agent", "reader", "--tool", "json-tools:query", "--args", `{} {}`}, exitUsage, "more than one JSON value"},
		{"bad tool", []string{"--agent", "reader", "--tool", "json-tools"}, exitUsage, `--tool: "json-tools" is not SURFACE:MEMBER`},
		{"bulk tool", []string{"--agent", "reader", "--tool", "mcp__json-tools"}, exitUsage, "names more than one tool"},
		{"bad format", []string{"--agent", "reader", "--tool", "json-tools:query", "--format", "yaml"}, exitUsage, `--format "yaml"`},
		{"stray argument", []string{"--agent", "reader", "--tool", "json-tools:query", "extra"}, exitUsage, `unexpected argument "extra"`},
		{"missing workspace", []string{"-w", "/nonexistent/toolgate.yaml", "--agent", "a", "--tool", "s:m"}, exitFail, "read workspace"},
		{"broken workspace", []string{"-w", broken, "--agent", "bot", "--tool", "s:m"}, exitFail, broken + ":5:9: agent \"bot\": grant tool:*"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"explain"}, tt.args...)
			if !strings.HasPrefix(tt.name, "missing workspace") && !strings.HasPrefix(tt.name, "broken") {
				args = append(args, "-w", demoWorkspace)
			}
			code, out, errOut := runGrantCLI(t, args...)
			if code != tt.code || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, errOut, tt.code, tt.stderr)
			}
			if out != "" {
				t.Errorf("stdout should be empty on error, got %q", out)
			}
		})
	}
	// Both grant problems are reported at once.
	_, _, errOut := runGrantCLI(t, "explain", "-w", broken, "--agent", "bot", "--tool", "s:m")
	if !strings.Contains(errOut, broken+":6:9:") || !strings.Contains(errOut, "2 problems") {
		t.Errorf("stderr %q should list both problems", errOut)
	}
}
