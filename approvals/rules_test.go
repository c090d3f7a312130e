package approvals

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

const rulesYAML = `version: 1
gateway:
  approvals:
    rules:
      - {agent: w, capability: "tool:notes:*"}
command_packs:
  - id: notes
    permission: cautious
    permission_overrides: {wipe: strict}
    commands:
      - {id: append, argv: [echo, "{text}"], inputs: {type: object, properties: {text: {type: string}}}, effects: write}
      - {id: wipe, argv: [rm, x], effects: write}
      - {id: show, argv: [cat, x], effects: read}
agents:
  - id: w
    grants: [tool:notes:append, tool:notes:wipe, tool:notes:show]
`

func TestRulesApproveCautiousWritesOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte(rulesYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := grantcheck.Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := CompileRules(p, ws)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		member string
		args   map[string]any
		want   string
	}{
		{"append", map[string]any{"text": "x"}, "rule:1"},
		{"wipe", nil, ""}, // strict: never by a rule
		{"show", nil, ""}, // a read is allowed outright, nothing to approve
	}
	for _, c := range cases {
		d := p.Decide("w", "notes", c.member, c.args)
		by, ok := rules.Match(p, d, "w", "notes", c.member, c.args)
		if by != c.want || ok != (c.want != "") {
			t.Errorf("%s (decision %s, tier %s): Match = %q %v, want %q", c.member, d.Outcome, d.Tier, by, ok, c.want)
		}
	}
	// Naming: the rules that name the agent and the tool or its surface.
	if got := rules.Naming("w", "notes", "append"); len(got) != 1 || got[0] != "rule:1" {
		t.Errorf("Naming(w, notes, append) = %v", got)
	}
	if got := rules.Naming("other", "notes", "append"); got != nil {
		t.Errorf("Naming of another agent = %v", got)
	}
	var none *Rules
	if none.Naming("w", "notes", "append") != nil {
		t.Error("nil rules name something")
	}
}
