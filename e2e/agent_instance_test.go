package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestPerAgentInstance runs `toolgate serve --agent` over HTTP: the identity
// is fixed at launch, and the agent's token is still required (a loopback
// address is not an identity: no token or a wrong one is refused), and
// tools/list shows the schema narrowed by the grant's constraints, with
// hints from the declared effects.
func TestPerAgentInstance(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", `version: 1
command_packs:
  - use: bundled/json-tools
    permission: open
agents:
  - id: bounded
    token: {env: BOUNDED_TOKEN}
    grants:
      - op: tool:json-tools:query
        param_constraints:
          file: {enum: [data.json, other.json]}
          filter: {max_length: 20}
      - op: tool:json-tools:edit-in-place
`)
	writeFile(t, dir, "data.json", `{"a":1}`)
	d := startDaemon(t, []string{"BOUNDED_TOKEN=bounded-token-0123456789abcdef"}, "-w", filepath.Join(dir, "toolgate.yaml"), "--agent", "bounded")

	cl := mcpHTTP(t, d.base+"/mcp/json-tools", "bounded-token-0123456789abcdef")
	list, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]mcp.Tool{}
	for _, tool := range list.Tools {
		tools[tool.Name] = tool
	}
	q, ok := tools["query"]
	if !ok || len(tools) != 2 {
		t.Fatalf("tools = %v, want query and edit-in-place", list.Tools)
	}
	raw, _ := json.Marshal(q)
	var shown struct {
		InputSchema struct {
			Properties map[string]map[string]any `json:"properties"`
		} `json:"inputSchema"`
		Annotations struct {
			ReadOnly    *bool `json:"readOnlyHint"`
			Destructive *bool `json:"destructiveHint"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &shown); err != nil {
		t.Fatal(err)
	}
	if enum, _ := json.Marshal(shown.InputSchema.Properties["file"]["enum"]); string(enum) != `["data.json","other.json"]` {
		t.Errorf("file enum shown = %s, want the grant's enum", enum)
	}
	if ml := shown.InputSchema.Properties["filter"]["maxLength"]; ml != float64(20) {
		t.Errorf("filter maxLength shown = %v, want 20", ml)
	}
	if shown.Annotations.ReadOnly == nil || !*shown.Annotations.ReadOnly || *shown.Annotations.Destructive {
		t.Errorf("query annotations = %s, want readOnlyHint true, destructiveHint false", raw)
	}
	edit, _ := json.Marshal(tools["edit-in-place"].Annotations)
	if !strings.Contains(string(edit), `"readOnlyHint":false`) || !strings.Contains(string(edit), `"destructiveHint":true`) {
		t.Errorf("edit-in-place annotations = %s, want a destructive write", edit)
	}

	text, isErr, _, _ := call(t, cl, "query", map[string]any{"filter": ".a", "file": "data.json"})
	if isErr || strings.TrimSpace(text) != "1" {
		t.Errorf("query within bounds: %q isError %v", text, isErr)
	}
	text, isErr, _, _ = call(t, cl, "query", map[string]any{"filter": ".a", "file": "/etc/passwd"})
	if !isErr || !strings.HasPrefix(text, "DENIED: ") || !strings.Contains(text, `"file"`) {
		t.Errorf("query outside the enum: %q, want DENIED naming the parameter", text)
	}
	text, isErr, _, _ = call(t, cl, "edit-in-place", map[string]any{"filter": ".a = 2", "file": "data.json"})
	if isErr {
		t.Errorf("open-tier write: %q", text)
	}

	for _, tok := range []string{"not-the-token", ""} {
		if r := toolgateHTTPStatus(t, d.base+"/mcp/json-tools", tok); r != 401 {
			t.Errorf("token %q on a per-agent loopback instance: status %d, want 401", tok, r)
		}
	}
}
