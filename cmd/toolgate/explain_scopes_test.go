package main

import (
	"strings"
	"testing"
)

const scopedWorkspace = `
version: 1
command_packs:
  - id: notes
    permission: open
    commands:
      - id: read
        argv: [echo, read]
        effects: read
        scopes: [notes:read]
      - id: write
        argv: [echo, write]
        effects: write
        scopes: [notes:read, notes:write]
agents:
  - id: bot
    scopes: [notes:read, notes:write]
    grants: [tool:notes:read, tool:notes:write]
`

// TestExplainScopes: --scopes decides as for an access token granting
// those scopes: the agent's declared scopes narrowed to the token's, so a
// tool needing one the token lacks is refused at the scopes stage, naming
// it; without the flag the declared scopes apply.
func TestExplainScopes(t *testing.T) {
	t.Parallel()
	ws := writeGrantFile(t, "toolgate.yaml", scopedWorkspace)
	tests := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"declared scopes", []string{"--tool", "notes:write"}, []string{"3 scopes       pass", "decision: allow"}},
		{"token grants read", []string{"--tool", "notes:read", "--scopes", "notes:read"}, []string{
			"3 scopes       pass     requires notes:read; the access token grants notes:read", "decision: allow"}},
		{"token lacks write", []string{"--tool", "notes:write", "--scopes", " notes:read ,other"}, []string{
			"3 scopes       fail", "4 schema       skipped", "6 tier         skipped", "decision: deny",
			"reason:   missing scopes: notes:write (the tool requires notes:read, notes:write; the access token grants notes:read, other)",
			"missing scopes: notes:write"}},
		{"token grants none", []string{"--tool", "notes:read", "--scopes", ""}, []string{
			"decision: deny", "missing scopes: notes:read (the tool requires notes:read; the access token grants none)"}},
		{"not granted stays unknown", []string{"--tool", "notes:nope", "--scopes", "notes:read"}, []string{
			"2 grant        fail", "3 scopes       skipped", `reason:   unknown tool "notes:nope"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runGrantCLI(t, append([]string{"explain", "-w", ws, "--agent", "bot"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, w := range tt.wants {
				if !strings.Contains(out, w) {
					t.Errorf("missing %q in:\n%s", w, out)
				}
			}
		})
	}
	code, out, _ := runGrantCLI(t, "explain", "-w", ws, "--agent", "bot", "--tool", "notes:write", "--scopes", "notes:read", "--format", "json")
	if code != 0 || !strings.Contains(out, `"decision": "deny"`) || !strings.Contains(out, `"missing_scopes": [`) {
		t.Fatalf("json: exit %d\n%s", code, out)
	}
}
