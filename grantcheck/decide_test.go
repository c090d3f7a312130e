package grantcheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// matrixWorkspace has, for every tier, a pack and an MCP server each with a
// read and a write member, all granted by name to agent "a".
func matrixWorkspace() string {
	var b strings.Builder
	b.WriteString("version: 1\nmcp_servers:\n")
	tiers := []string{"open", "cautious", "strict", "readonly"}
	for _, t := range tiers {
		fmt.Fprintf(&b, "  - id: srv-%s\n    command: [srv]\n    permission: %s\n    effects: {get: read, put: write}\n", t, t)
	}
	b.WriteString("command_packs:\n")
	for _, t := range tiers {
		fmt.Fprintf(&b, "  - id: pk-%s\n    permission: %s\n    commands:\n", t, t)
		b.WriteString("      - {id: get, argv: [cat, x], effects: read}\n")
		b.WriteString("      - {id: put, argv: [touch, x], effects: write}\n")
	}
	b.WriteString("agents:\n  - id: a\n    grants:\n")
	for _, t := range tiers {
		for _, m := range []string{"get", "put"} {
			fmt.Fprintf(&b, "      - tool:srv-%s:%s\n      - tool:pk-%s:%s\n", t, m, t, m)
		}
	}
	return b.String()
}

func TestTierMatrix(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, matrixWorkspace())
	listed := p
	for _, tier := range []string{"open", "cautious", "strict", "readonly"} {
		var err error
		listed, err = listed.WithServerTools("srv-"+tier, []ToolInfo{{Name: "get"}, {Name: "put"}})
		if err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][2]Outcome{ // tier: {read, write}
		"open":     {Allow, Allow},
		"cautious": {Allow, Approval},
		"strict":   {Approval, Approval},
		"readonly": {Allow, Deny},
	}
	for tier, w := range want {
		for i, member := range []string{"get", "put"} {
			effect := []workspace.Effect{workspace.EffectRead, workspace.EffectWrite}[i]
			for _, c := range []struct {
				name    string
				policy  *Policy
				surface string
			}{
				{"pack", p, "pk-" + tier},
				{"mcp unlisted", p, "srv-" + tier},
				{"mcp listed", listed, "srv-" + tier},
			} {
				d := c.policy.Decide("a", c.surface, member, map[string]any{})
				if d.Outcome != w[i] || d.Stage != StageTier || d.Tier != workspace.Tier(tier) || d.Effects != effect {
					t.Errorf("%s %s:%s = %+v; want %s under %s for a %s", c.name, c.surface, member, d, w[i], tier, effect)
				}
				if d.Grant != "tool:"+c.surface+":"+member {
					t.Errorf("%s: grant %q", c.name, d.Grant)
				}
			}
		}
	}
}

// Names never decide: only declared effects do.
func TestReadonlyEffectsNotNames(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: db
    command: [db-server]
    permission: readonly
    effects: {truncate_table: write, send_query: read}
  - id: trusting
    command: [other]
    permission: readonly
    trust_annotations: true
    effects: {declared_write: write}
agents:
  - id: a
    grants: [server:db, server:trusting]
`)
	yes, no := true, false
	p, err := p.WithServerTools("db", []ToolInfo{
		{Name: "truncate_table"}, {Name: "send_query"},
		{Name: "get_rows", ReadOnlyHint: &yes}, // untrusted hint: still a write
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err = p.WithServerTools("trusting", []ToolInfo{
		{Name: "list", ReadOnlyHint: &yes},
		{Name: "drop", ReadOnlyHint: &no},
		{Name: "undeclared"},
		{Name: "declared_write", ReadOnlyHint: &yes}, // the declaration beats the hint
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		surface, tool string
		want          Outcome
		effects       workspace.Effect
	}{
		{"db", "truncate_table", Deny, workspace.EffectWrite},
		{"db", "send_query", Allow, workspace.EffectRead},
		{"db", "get_rows", Deny, workspace.EffectWrite},
		{"trusting", "list", Allow, workspace.EffectRead},
		{"trusting", "drop", Deny, workspace.EffectWrite},
		{"trusting", "undeclared", Deny, workspace.EffectWrite},
		{"trusting", "declared_write", Deny, workspace.EffectWrite},
	}
	for _, tt := range tests {
		d := p.Decide("a", tt.surface, tt.tool, nil)
		if d.Outcome != tt.want || d.Effects != tt.effects {
			t.Errorf("%s:%s = %s (%s, %s), want %s (%s)", tt.surface, tt.tool, d.Outcome, d.Effects, d.Reason, tt.want, tt.effects)
		}
		if tt.want == Deny && d.Reason != "readonly tier: write refused" {
			t.Errorf("%s:%s reason %q", tt.surface, tt.tool, d.Reason)
		}
	}
}

func TestScopes(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: gh
    command: [gh-mcp]
    permission: open
    scopes: [repo:read]
    scope_overrides: {merge_pr: [repo:read, repo:write, org:admin]}
command_packs:
  - id: notes
    permission: open
    commands:
      - {id: list, argv: [ls], effects: read, scopes: [notes:read]}
agents:
  - id: reader
    scopes: [repo:read, notes:read]
    grants: [tool:gh:list_prs, tool:gh:merge_pr, pack:notes]
  - id: nobody
    grants: [tool:gh:list_prs, pack:notes]
`)
	tests := []struct {
		agent, surface, tool string
		missing              []string
	}{
		{"reader", "gh", "list_prs", nil},
		{"reader", "gh", "merge_pr", []string{"repo:write", "org:admin"}},
		{"reader", "notes", "list", nil},
		{"nobody", "gh", "list_prs", []string{"repo:read"}},
		{"nobody", "notes", "list", []string{"notes:read"}},
	}
	for _, tt := range tests {
		d := p.Decide(tt.agent, tt.surface, tt.tool, nil)
		if tt.missing == nil {
			if d.Outcome != Allow {
				t.Errorf("%s %s:%s = %+v, want allow", tt.agent, tt.surface, tt.tool, d)
			}
			continue
		}
		if d.Outcome != Deny || d.Stage != StageScopes || !slices.Equal(d.MissingScopes, tt.missing) {
			t.Errorf("%s %s:%s = %+v, want a scope denial naming %v", tt.agent, tt.surface, tt.tool, d, tt.missing)
		}
		if !strings.Contains(d.Reason, "missing scopes: "+strings.Join(tt.missing, ", ")) {
			t.Errorf("reason %q does not name the missing scopes", d.Reason)
		}
	}
}

func TestIdentityAndUnknownTools(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, fmt.Sprintf(bulkPack, "      - {id: purge, argv: [rm, x], effects: write}"))
	d := p.Decide("mallory", "notes", "list", nil)
	if d.Outcome != Deny || d.Stage != StageIdentity || d.Reason != `unknown agent "mallory"` {
		t.Errorf("unknown agent: %+v", d)
	}
	// Not granted, no such member, no such surface: one refusal text.
	for _, c := range [][2]string{{"notes", "purge"}, {"notes", "nope"}, {"nope", "list"}, {"", ""}} {
		d := p.Decide("a", c[0], c[1], nil)
		want := Decision{Outcome: Deny, Stage: StageGrant, Reason: UnknownToolReason(c[0], c[1])}
		if d.Outcome != want.Outcome || d.Stage != want.Stage || d.Reason != want.Reason || d.Grant != "" || d.Tier != "" {
			t.Errorf("%s:%s = %+v, want %+v", c[0], c[1], d, want)
		}
	}
}

func TestSchemaValidation(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: kv
    command: [kv]
    permission: open
command_packs:
  - id: json-tools
    permission: open
    commands:
      - id: query
        argv: [jq, "{filter}", "{file}"]
        inputs:
          type: object
          properties:
            filter: {type: string}
            file: {type: string}
          required: [filter, file]
          additionalProperties: false
        effects: read
      - id: version
        argv: [jq, --version]
        effects: read
agents:
  - id: a
    grants: [pack:json-tools, server:kv]
`)
	p, err := p.WithServerTools("kv", []ToolInfo{{Name: "get", InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","format":"uuid","pattern":"^[a-f0-9-]+$"}},"required":["key"]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, surface, tool string
		args                map[string]any
		reason              string // "" for allow
	}{
		{"valid", "json-tools", "query", map[string]any{"filter": ".", "file": "a.json"}, ""},
		{"missing", "json-tools", "query", map[string]any{"filter": "."}, "missing property 'file'"},
		{"wrong type", "json-tools", "query", map[string]any{"filter": ".", "file": 3.0}, `argument "file": got number, want string`},
		{"extra", "json-tools", "query", map[string]any{"filter": ".", "file": "a", "x": true}, "additional properties 'x' not allowed"},
		{"no inputs, no args", "json-tools", "version", nil, ""},
		{"no inputs, an arg", "json-tools", "version", map[string]any{"x": "y"}, "additional properties 'x' not allowed"},
		{"mcp valid", "kv", "get", map[string]any{"key": "ab-12"}, ""},
		{"mcp pattern", "kv", "get", map[string]any{"key": "XYZ"}, `argument "key": 'XYZ' does not match pattern`},
		{"mcp missing", "kv", "get", map[string]any{}, "missing property 'key'"},
		{"non-JSON value", "kv", "get", map[string]any{"key": []string{"a"}}, "argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := p.Decide("a", tt.surface, tt.tool, tt.args)
			if tt.reason == "" {
				if d.Outcome != Allow {
					t.Fatalf("%+v, want allow", d)
				}
				return
			}
			if d.Outcome != Deny || d.Stage != StageSchema || !strings.Contains(d.Reason, tt.reason) {
				t.Fatalf("%+v, want a schema denial containing %q", d, tt.reason)
			}
			if !strings.HasPrefix(d.Reason, "arguments do not match the input schema: ") {
				t.Errorf("reason %q", d.Reason)
			}
		})
	}
}

func TestExplain(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, fmt.Sprintf(bulkPack, "      - {id: purge, argv: [rm, x], effects: write}"))
	tests := []struct {
		agent, tool string
		statuses    []string
		detail      string // in the last non-skipped step
	}{
		{"a", "list", []string{"pass", "pass", "pass", "pass", "pass", "pass"}, "open tier: read allowed"},
		{"a", "purge", []string{"pass", "fail", "skipped", "skipped", "skipped", "skipped"}, "pack:notes covers only the read commands"},
		{"a", "nope", []string{"pass", "fail", "skipped", "skipped", "skipped", "skipped"}, `pack "notes" has no command "nope"`},
		{"zed", "list", []string{"fail", "skipped", "skipped", "skipped", "skipped", "skipped"}, `no agent "zed" is declared`},
	}
	for _, tt := range tests {
		e := p.Explain(tt.agent, "notes", tt.tool, nil)
		d := p.Decide(tt.agent, "notes", tt.tool, nil)
		if !equalDecision(e.Decision, d) {
			t.Errorf("Explain decided %+v, Decide %+v", e.Decision, d)
		}
		var got []string
		last := ""
		for i, s := range e.Steps {
			if s.Stage != Stages()[i] {
				t.Errorf("step %d is %s", i, s.Stage)
			}
			got = append(got, s.Status)
			if s.Status != "skipped" {
				last = s.Detail
			}
		}
		if !slices.Equal(got, tt.statuses) || !strings.Contains(last, tt.detail) {
			t.Errorf("%s %s: steps %v (last %q), want %v with %q", tt.agent, tt.tool, got, last, tt.statuses, tt.detail)
		}
	}
}

func equalDecision(a, b Decision) bool {
	return a.Outcome == b.Outcome && a.Reason == b.Reason && a.Stage == b.Stage && a.Tier == b.Tier &&
		a.Effects == b.Effects && a.Grant == b.Grant && slices.Equal(a.MissingScopes, b.MissingScopes)
}
