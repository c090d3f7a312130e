package workspace

import (
	"slices"
	"testing"
)

// TestLoadMarksDamage checks where a load with errors marks them, which
// is what keeps the later checks from reporting their consequences.
func TestLoadMarksDamage(t *testing.T) {
	t.Parallel()
	const agent = "agents:\n  - id: a\n    grants: [pack:p]\n"
	tests := []struct {
		name, src string
		want      []string
	}{
		{"clean", "version: 1\ncommand_packs:\n  - id: p\n    commands:\n      - {id: c, argv: [x], effects: read}\n" + agent, nil},
		{"a pack field", "version: 1\ncommand_packs:\n  - id: p\n    permission: careful\n    commands:\n      - {id: c, argv: [x], effects: read}\n" + agent,
			[]string{"3:5 pack p"}},
		{"a command field", "version: 1\ncommand_packs:\n  - id: p\n    commands:\n      - {id: c, argv: [x], effects: reed}\n      - {id: d, argv: [x]}\n" + agent,
			[]string{"3:5 pack p", "5:9 command p:c"}},
		{"a command the validator refuses", "version: 1\ncommand_packs:\n  - id: p\n    commands:\n      - {id: c, argv: [sh, -c, x]}\n",
			[]string{"3:5 pack p", "5:9 command p:c"}},
		{"a command without id", "version: 1\ncommand_packs:\n  - id: p\n    commands:\n      - {argv: [x]}\n",
			[]string{"3:5 pack p", "3:5 pack p unread commands", "5:9 command p:"}},
		{"a command entry that is not a mapping", "version: 1\ncommand_packs:\n  - id: p\n    commands: [c, {id: d, argv: [x]}]\n",
			[]string{"3:5 pack p", "3:5 pack p unread commands"}},
		{"commands not a list", "version: 1\ncommand_packs:\n  - id: p\n    commands: {c: {argv: [x]}}\n",
			[]string{"3:5 pack p", "3:5 pack p unread commands"}},
		{"a pack entry that is not a mapping", "version: 1\ncommand_packs: [p]\n" + agent, []string{"unread surfaces"}},
		{"a pack without id", "version: 1\ncommand_packs:\n  - commands: [{id: c, argv: [x]}]\n", []string{"unread surfaces", "3:5 pack "}},
		{"a pack with an invalid id", "version: 1\ncommand_packs:\n  - id: p/q\n    commands: [{id: c, argv: [x]}]\n", []string{"unread surfaces", "3:5 pack p/q"}},
		{"a misspelt list", "version: 1\ncommand_pack:\n  - id: p\n" + agent, []string{"unread surfaces", "unread agents"}},
		{"an unknown bundled pack", "version: 1\ncommand_packs:\n  - use: bundled/nope\n  - id: q\n    use: bundled/nope\n",
			[]string{"unread surfaces", "3:5 pack ", "3:5 pack  unread commands", "4:5 pack q", "4:5 pack q unread commands"}},
		{"a duplicate surface", "version: 1\nmcp_servers:\n  - {id: p, url: http://127.0.0.1/mcp}\ncommand_packs:\n  - id: p\n    commands: [{id: c, argv: [x]}]\n",
			[]string{"5:5 pack p"}},
		{"a requirement", "version: 1\ncommand_packs:\n  - id: p\n    requires: [{binary: jq, versoin: x}]\n    commands: [{id: c, argv: [x]}]\n",
			[]string{"3:5 pack p", "4:16 requires jq"}},
		{"a grant", "version: 1\nagents:\n  - id: a\n    grants:\n      - {op: pack:p, param_constraint: {}}\n      - [x]\n      - pack:q\n",
			[]string{"3:5 agent a", "5:9 grant pack:p", "6:9 grant "}},
		{"a grant without op", "version: 1\nagents:\n  - id: a\n    grants:\n      - {param_constraints: {x: {maximum: 1}}}\n",
			[]string{"3:5 agent a", "5:9 grant "}},
		{"an agent without id", "version: 1\nagents:\n  - grants: [pack:p]\n", []string{"unread agents", "3:5 agent "}},
		{"an agent entry that is not a mapping", "version: 1\nagents: [a]\n", []string{"unread agents"}},
		{"an approval rule", "version: 1\ngateway:\n  approvals:\n    rules:\n      - {agent: a}\n      - {agent: a, capability: tool:p:c, nope: 1}\n",
			[]string{"5:9 rule", "6:9 rule"}},
		{"a gateway field", "version: 1\ngateway: {listen: nowhere}\n" + agent, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, err := Parse("d.yaml", []byte(tt.src))
			if (err == nil) != (tt.name == "clean") {
				t.Fatalf("Parse error %v", err)
			}
			if ws == nil {
				t.Fatalf("no workspace returned with %v", err)
			}
			if got := damageOf(ws); !slices.Equal(got, tt.want) {
				t.Errorf("damage = %q, want %q (errors: %v)", got, tt.want, err)
			}
		})
	}
}
