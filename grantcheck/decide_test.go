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

const bulkPack = `
version: 1
command_packs:
  - id: notes
    permission: open
    commands:
      - {id: list, argv: [ls], effects: read}
      - {id: show, argv: [cat, x], effects: read}
%s
agents:
  - id: a
    grants: [pack:notes]
  - id: b
    grants: [tool:notes:*]
`

func TestPackBulkGrantNeverCoversWrites(t *testing.T) {
	t.Parallel()
	before := compileYAML(t, fmt.Sprintf(bulkPack, ""))
	// The same workspace after someone adds a write command (and one with
	// no effects, which is a write) to the pack.
	after := compileYAML(t, fmt.Sprintf(bulkPack, "      - {id: purge, argv: [rm, -rf, x], effects: write}\n      - {id: touch, argv: [touch, x]}"))
	for _, agentID := range []string{"a", "b"} {
		for _, p := range []*Policy{before, after} {
			for _, m := range []string{"list", "show"} {
				if d := p.Decide(agentID, "notes", m, nil); d.Outcome != Allow {
					t.Errorf("%s notes:%s = %+v, want allow", agentID, m, d)
				}
			}
		}
		for _, m := range []string{"purge", "touch"} {
			d := after.Decide(agentID, "notes", m, nil)
			if d.Outcome != Deny || d.Stage != StageGrant || d.Reason != UnknownToolReason("notes", m) {
				t.Errorf("%s notes:%s after the write was added = %+v, want the unknown-tool refusal", agentID, m, d)
			}
			if d.Tier != "" || d.Effects != "" || d.Grant != "" {
				t.Errorf("a refusal of an ungranted tool reveals %q %q %q", d.Tier, d.Effects, d.Grant)
			}
		}
		var names []string
		for _, v := range after.Tools(agentID, "notes") {
			names = append(names, v.Name)
		}
		if !slices.Equal(names, []string{"list", "show"}) {
			t.Errorf("%s sees %v, want only the read commands", agentID, names)
		}
		caps, err := after.Capabilities(agentID)
		if err != nil || len(caps) != 2 || caps[0] != Tool("notes", "list") || caps[1] != Tool("notes", "show") {
			t.Errorf("Capabilities(%s) = %v, %v", agentID, caps, err)
		}
	}
}

func TestServerBulkGrant(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: memory
    command: [node, server.js]
    permission: open
agents:
  - id: a
    grants: [server:memory]
  - id: b
    grants: [tool:memory:*]
  - id: c
    grants: [tool:memory:read_graph]
`)
	tools := []ToolInfo{{Name: "read_graph"}, {Name: "create_entities"}, {Name: "delete_entities"}}
	// Unenumerable means deny, for bulk grants; an exact grant proceeds on
	// what the workspace declares.
	for _, agentID := range []string{"a", "b"} {
		if d := p.Decide(agentID, "memory", "read_graph", nil); d.Outcome != Deny || d.Reason != UnknownToolReason("memory", "read_graph") {
			t.Errorf("%s before listing: %+v, want deny", agentID, d)
		}
	}
	if d := p.Decide("c", "memory", "read_graph", map[string]any{"anything": 1.0}); d.Outcome != Allow {
		t.Errorf("exact grant before listing: %+v, want allow (no schema known, none checked)", d)
	}
	listed, err := p.WithServerTools("memory", tools)
	if err != nil {
		t.Fatal(err)
	}
	for _, agentID := range []string{"a", "b"} {
		for _, tool := range tools {
			if d := listed.Decide(agentID, "memory", tool.Name, nil); d.Outcome != Allow {
				t.Errorf("%s memory:%s after listing = %+v, want allow", agentID, tool.Name, d)
			}
		}
		if got := len(listed.Tools(agentID, "memory")); got != 3 {
			t.Errorf("%s sees %d tools, want 3", agentID, got)
		}
		if d := listed.Decide(agentID, "memory", "not_listed", nil); d.Outcome != Deny {
			t.Errorf("%s memory:not_listed = %+v, want deny", agentID, d)
		}
		if d := p.Decide(agentID, "memory", "read_graph", nil); d.Outcome != Deny {
			t.Errorf("WithServerTools changed the original policy: %+v", d)
		}
	}
	if d := listed.Decide("c", "memory", "delete_entities", nil); d.Outcome != Deny {
		t.Errorf("c holds one tool but got %+v for another", d)
	}
	// A server that stops listing a tool takes it away, even from an exact grant.
	relisted, err := listed.WithServerTools("memory", tools[1:])
	if err != nil {
		t.Fatal(err)
	}
	if d := relisted.Decide("c", "memory", "read_graph", nil); d.Outcome != Deny {
		t.Errorf("exact grant of an unlisted tool = %+v, want deny", d)
	}
}

func TestWithServerToolsErrors(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: memory
    command: [node, server.js]
command_packs:
  - id: notes
    commands: [{id: list, argv: [ls], effects: read}]
agents:
  - id: a
    grants: [server:memory]
`)
	tests := []struct {
		server string
		tools  []ToolInfo
		want   string
	}{
		{"nope", nil, `no MCP server "nope"`},
		{"notes", nil, "is a command pack"},
		{"memory", []ToolInfo{{Name: "x"}, {Name: "x"}}, `lists tool "x" twice`},
		{"memory", []ToolInfo{{Name: "bad name"}}, `"bad name", which no capability can name`},
	}
	for _, tt := range tests {
		if np, err := p.WithServerTools(tt.server, tt.tools); err == nil || np != nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("WithServerTools(%s) = %v, %v; want error containing %q", tt.server, np, err, tt.want)
		}
	}
	// A tool whose schema does not compile is kept and refused with the reason.
	np, err := p.WithServerTools("memory", []ToolInfo{{Name: "broken", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"wat"}}}`)}})
	if err != nil {
		t.Fatal(err)
	}
	d := np.Decide("a", "memory", "broken", nil)
	if d.Outcome != Deny || d.Stage != StageSchema || !strings.Contains(d.Reason, "could not be compiled") {
		t.Errorf("broken schema: %+v", d)
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

// A Policy is shared by every request goroutine while the gateway swaps in
// listings; run under -race this shows neither path writes shared state.
func TestConcurrentDecide(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: memory
    command: [node, server.js]
    permission: open
command_packs:
  - id: notes
    permission: open
    commands:
      - id: show
        argv: [cat, "{path}"]
        inputs: {type: object, properties: {path: {type: string}}, required: [path]}
        effects: read
agents:
  - id: a
    grants:
      - server:memory
      - op: tool:notes:show
        param_constraints:
          path: {pattern: "[a-z]+", max_length: 8}
`)
	done := make(chan *Policy)
	go func() {
		cur := p
		for i := range 50 {
			next, err := cur.WithServerTools("memory", []ToolInfo{{Name: fmt.Sprintf("t%d", i)}})
			if err != nil {
				t.Error(err)
				break
			}
			cur = next
		}
		done <- cur
	}()
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			for range 200 {
				if d := p.Decide("a", "notes", "show", map[string]any{"path": "abc"}); d.Outcome != Allow {
					errs <- d.Reason
					return
				}
				if d := p.Decide("a", "notes", "show", map[string]any{"path": "ABC"}); d.Outcome != Deny {
					errs <- "ABC allowed"
					return
				}
				_ = p.Tools("a", "")
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	last := <-done
	if d := last.Decide("a", "memory", "t49", nil); d.Outcome != Allow {
		t.Errorf("after 50 listings: %+v", d)
	}
}
