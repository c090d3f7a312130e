package grantcheck

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

const rulesWorkspace = `
version: 1
gateway:
  approvals:
    rules:
      - {agent: w, capability: tool:notes:append, param_constraints: {text: {max_length: 5}}}
      - {agent: w, capability: "tool:notes:*"}
      - {agent: w, capability: notes-purge}
command_packs:
  - id: notes
    commands:
      - {id: append, argv: [echo, "{text}"], inputs: {type: object, properties: {text: {type: string}}}, effects: write}
      - {id: purge, argv: [rm, x], effects: write}
agents:
  - id: w
    grants: [tool:notes:append, tool:notes:purge]
  - id: other
    grants: [tool:notes:append]
`

func TestApprovalRulesMatch(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Load(writeWorkspace(t, rulesWorkspace))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := p.CompileApprovalRules(ws.Gateway.Approvals.Rules)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 3 {
		t.Fatalf("compiled %d rules, want 3", len(rules))
	}
	cases := []struct {
		name   string
		rule   int
		agent  string
		member string
		args   map[string]any
		want   bool
	}{
		{"constraint holds", 0, "w", "append", map[string]any{"text": "hi"}, true},
		{"constraint fails", 0, "w", "append", map[string]any{"text": "too long"}, false},
		{"constrained param absent", 0, "w", "append", map[string]any{}, false},
		{"other agent", 0, "other", "append", map[string]any{"text": "hi"}, false},
		{"other member", 0, "w", "purge", nil, false},
		{"surface rule covers every member", 1, "w", "purge", nil, true},
		{"alias resolves", 2, "w", "purge", nil, true},
		{"alias names one member", 2, "w", "append", map[string]any{"text": "hi"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if got := p.RuleCovers(rules[c.rule], c.agent, "notes", c.member, c.args); got != c.want {
				t.Errorf("RuleCovers = %v, want %v", got, c.want)
			}
		})
	}
}

func TestApprovalRulesErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rule string
		want string
	}{
		{"{agent: ghost, capability: tool:notes:append}", `agent "ghost" is not declared`},
		{"{agent: w, capability: pack:notes}", "not a pack capability"},
		{"{agent: w, capability: tool:nope:x}", `surface "nope" is not declared`},
		{"{agent: w, capability: tool:notes:nope}", `pack "notes" has no command "nope"`},
		{"{agent: w, capability: tool:notes:append, param_constraints: {text: {pattern: '('}}}", "not a valid RE2"},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			y := strings.Replace(rulesWorkspace, "    rules:\n", "    rules:\n      - "+c.rule+"\n", 1)
			ws, err := workspace.Load(writeWorkspace(t, y))
			if err != nil {
				t.Fatal(err)
			}
			p, err := Compile(ws)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.CompileApprovalRules(ws.Gateway.Approvals.Rules)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to say %q", err, c.want)
			}
			if l := workspace.AsList(err); len(l) != 1 || l[0].Pos.Line == 0 {
				t.Errorf("err = %#v, want one positioned error", l)
			}
		})
	}
}
