package grantcheck

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestCheckServerNames: every place a workspace names a proxied tool is
// checked against the server's pinned names, at the name's position, with
// a did-you-mean; a server the lock does not pin is left alone.
func TestCheckServerNames(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Parse("ws.yaml", []byte(`version: 1
gateway:
  approvals:
    rules:
      - agent: a
        capability: tool:memory:creat_entities
mcp_servers:
  - id: memory
    command: [node, server.js]
    effects: {read_grahp: read, search_nodes: read}
    permission_overrides: {delete_entitie: strict}
    scope_overrides: {open_nodes: [x]}
    timeout_overrides: {zzzzzzzzzz: 5s}
  - id: other
    command: [node, other.js]
    effects: {anything: read}
agents:
  - id: a
    token: {env: A}
    grants:
      - tool:memory:search_node
      - tool:memory:read_graph
      - server:memory
      - tool:other:whatever
`))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string][]string{"memory": {"create_entities", "delete_entities", "open_nodes", "read_graph", "search_nodes"}}
	errs := CheckServerNames(ws, listed)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	want := []string{
		`ws.yaml:10:15: server "memory" effects names tool "read_grahp", which server "memory" does not list (toolgate.lock) (did you mean "read_graph"?)`,
		`ws.yaml:11:28: server "memory" permission_overrides names tool "delete_entitie"`,
		`(did you mean "delete_entities"?)`,
		`ws.yaml:13:25: server "memory" timeout_overrides names tool "zzzzzzzzzz", which server "memory" does not list (toolgate.lock); fix the name`,
		`ws.yaml:21:9: agent "a" grant "tool:memory:search_node" names tool "search_node", which server "memory" does not list (toolgate.lock) (did you mean "search_nodes"?); fix the name, or run ` + "`toolgate pin --update`",
		`ws.yaml:5:9: approval rule "tool:memory:creat_entities" names tool "creat_entities"`,
	}
	all := strings.Join(got, "\n")
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("missing %q in\n%s", w, all)
		}
	}
	if len(errs) != 5 {
		t.Errorf("%d errors, want 5:\n%s", len(errs), all)
	}
	if strings.Contains(all, "other") {
		t.Errorf("a server the lock does not pin was checked:\n%s", all)
	}
	if errs := CheckServerNames(ws, nil); len(errs) != 0 {
		t.Errorf("no lock: %v", errs)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	names := []string{"read_graph", "search_nodes", "open_nodes", "create_entities"}
	for _, tc := range []struct{ in, want string }{
		{"search_node", "search_nodes"},
		{"read_grahp", "read_graph"},
		{"READ_GRAPH", "read_graph"},
		{"open_node", "open_nodes"},
		{"delete", ""},
		{"x", ""},
		{strings.Repeat("a", 100000), ""}, // hostile: bounded, no suggestion
		{"séarch_nodes", "search_nodes"},
	} {
		got := Suggest(tc.in, names)
		if tc.want == "" && got != "" || tc.want != "" && got != ` (did you mean "`+tc.want+`"?)` {
			t.Errorf("Suggest(%.20q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if Suggest("a", nil) != "" {
		t.Error("a suggestion among no names")
	}
}

// TestToolInfos: a listing is read as the gateway keeps it — the first of
// a repeated name, what is not a tool left out — from listed or pinned
// definitions alike.
func TestToolInfos(t *testing.T) {
	t.Parallel()
	infos := ToolInfos([]json.RawMessage{
		json.RawMessage(`{"name":"a","description":"first","annotations":{"readOnlyHint":true}}`),
		json.RawMessage(`{"name":"a","description":"second"}`),
		json.RawMessage(`{"description":"no name"}`),
		json.RawMessage(`[1]`),
		json.RawMessage(`{"name":"b","inputSchema":{"type":"object"}}`),
	})
	if len(infos) != 2 || infos[0].Description != "first" || infos[0].ReadOnlyHint == nil || !*infos[0].ReadOnlyHint || string(infos[1].InputSchema) != `{"type":"object"}` {
		t.Fatalf("%+v", infos)
	}
}
