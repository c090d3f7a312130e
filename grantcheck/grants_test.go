package grantcheck

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

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
