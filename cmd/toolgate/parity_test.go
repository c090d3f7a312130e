package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestParityCLI(t *testing.T) {
	t.Parallel()
	green := writeGrantFile(t, "green.yaml", `
agents:
  - agent: reader
    provider: claude
    allowed_tools: [mcp__json-tools__query, mcp__json-tools__keys, mcp__json-tools__validate, mcp__notes__list, mcp__notes__remove]
  - agent: editor
    provider: cursor
`)
	wider := writeGrantFile(t, "wider.yaml", `
agents:
  - agent: editor
    provider: claude
    argv: [claude, -p, --allowed-tools, "mcp__json-tools__edit-in-place,mcp__json-tools__query"]
`)
	unknown := writeGrantFile(t, "unknown.yaml", `
agents:
  - agent: reader
    provider: codex
  - agent: ghost
    provider: claude
    stub: {load_error: "agent file: yaml: line 3: mapping values are not allowed here"}
`)
	bad := writeGrantFile(t, "bad.yaml", `
agents:
  - agent: reader
    provider: claude
    allowed: [x]
`)
	tests := []struct {
		name  string
		args  []string
		code  int
		wants []string
	}{
		{"the example stays green", []string{"--harness", "../../examples/harness/HARNESS.yaml"}, exitOK, []string{"reader/claude: GREEN", "editor/claude: GREEN", "run: GREEN"}},
		{"green", []string{"--harness", green}, exitOK, []string{"reader/claude: GREEN", "editor/cursor: UNKNOWN", "run: GREEN (1 green, 0 red, 1 unknown)"}},
		{"widened by one tool", []string{"--harness", wider}, exitFail, []string{"editor/claude: RED", "harness only: tool:json-tools:query", "run: RED"}},
		{"every row unknown", []string{"--harness", unknown}, exitFail, []string{"reader/codex: UNKNOWN", "mapping values are not allowed here", "every row is unknown"}},
		{"strict harness file", []string{"--harness", bad}, exitFail, []string{bad + `:4:5: unknown field "allowed"`}},
		{"missing --harness", nil, exitUsage, []string{"--harness HARNESS.yaml is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runGrantCLI(t, append([]string{"parity", "-w", demoWorkspace}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			for _, w := range tt.wants {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output does not contain %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
	t.Run("json", func(t *testing.T) {
		t.Parallel()
		code, out, _ := runGrantCLI(t, "parity", "-w", demoWorkspace, "--harness", wider, "--format", "json")
		var rep struct {
			Run  string `json:"run"`
			Rows []struct {
				Agent, Provider, Verdict, Note string
				Harness, Grant                 []string
				Delta                          struct {
					HarnessOnly []string `json:"harness_only"`
					GrantOnly   []string `json:"grant_only"`
				}
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if code != exitFail || rep.Run != "red" || len(rep.Rows) != 1 || rep.Rows[0].Verdict != "red" ||
			strings.Join(rep.Rows[0].Delta.HarnessOnly, ",") != "tool:json-tools:query" ||
			strings.Join(rep.Rows[0].Grant, ",") != "tool:json-tools:edit-in-place" {
			t.Errorf("exit %d, report %+v", code, rep)
		}
	})
}
