package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// structuredWorkspace serves the bundled json-tools pack (keys is parse:
// json and prints an array) and a parse: json command whose output may be
// any JSON value, or not JSON at all.
const structuredWorkspace = `version: 1
command_packs:
  - use: bundled/json-tools
  - id: raw
    commands:
      - id: eval
        description: Print what a jq expression evaluates to.
        argv: [jq, -n, "{expr}"]
        inputs: {type: object, properties: {expr: {type: string}}, required: [expr]}
        effects: read
        output: {parse: json}
agents:
  - id: reader
    grants: [pack:json-tools, pack:raw]
`

// TestStructuredContentIsAnObject checks over MCP that a parse:
// json tool declares an object outputSchema and answers every JSON value
// with an object structuredContent, a text tool declares none (and
// carries {"result": v} only for a JSON scalar or array it prints); and the
// official TypeScript SDK client, which validates structuredContent
// against outputSchema and rejects a non-object, accepts every answer.
func TestStructuredContentIsAnObject(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", structuredWorkspace)
	data := writeFile(t, dir, "data.json", `{"name":"toolgate","items":[1,2]}`)
	serve := []string{"serve", "-w", ws, "--agent", "reader", "--stdio", "--surface"}

	cl := mcpStdio(t, nil, append(serve, "json-tools")...)
	list, err := cl.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]json.RawMessage{}
	for _, tool := range list.Tools {
		b, _ := json.Marshal(tool)
		var raw struct {
			OutputSchema json.RawMessage `json:"outputSchema"`
		}
		_ = json.Unmarshal(b, &raw)
		schemas[tool.Name] = raw.OutputSchema
	}
	if !strings.Contains(string(schemas["keys"]), `"type":"object"`) {
		t.Errorf("keys (parse: json) outputSchema = %s, want an object schema", schemas["keys"])
	}
	if s := schemas["query"]; s != nil {
		t.Errorf("query (text) declares outputSchema %s", s)
	}
	_, isErr, res, err := call(t, cl, "keys", map[string]any{"file": data})
	if err != nil || isErr {
		t.Fatalf("keys: %v %v", err, res)
	}
	if want := map[string]any{"result": []any{"items", "name"}}; !reflect.DeepEqual(res.StructuredContent, want) {
		t.Errorf("keys structuredContent = %#v, want %#v", res.StructuredContent, want)
	}

	node, _ := conformanceSuite(t)
	sdk := filepath.Join(repoRoot(t), "e2e", ".cache", "conformance", "node_modules", "@modelcontextprotocol", "sdk")
	calls := []struct {
		surface, tool string
		args          map[string]any
		want          any // structuredContent; nil for none
	}{
		{"json-tools", "keys", map[string]any{"file": data}, map[string]any{"result": []any{"items", "name"}}},
		// A text tool declares no outputSchema; a JSON scalar it prints
		// still comes with an object (Gemini CLI would otherwise make the
		// bare value structuredContent), other text with none.
		{"json-tools", "query", map[string]any{"filter": ".name", "file": data}, map[string]any{"result": "toolgate"}},
		{"json-tools", "query", map[string]any{"filter": ".", "file": data}, nil},
		{"json-tools", "query", map[string]any{"filter": ".items[]", "file": data}, nil},
		{"raw", "eval", map[string]any{"expr": `{"a": 1}`}, map[string]any{"a": float64(1)}},
		{"raw", "eval", map[string]any{"expr": `"text"`}, map[string]any{"result": "text"}},
		{"raw", "eval", map[string]any{"expr": "null"}, map[string]any{"result": nil}},
		{"raw", "eval", map[string]any{"expr": "1, 2"}, "unparsed"},
	}
	for _, surface := range []string{"json-tools", "raw"} {
		args := []string{filepath.Join("testdata", "tsclient", "call.mjs"), sdk}
		var mine []int
		for i, c := range calls {
			if c.surface == surface {
				b, _ := json.Marshal(map[string]any{"name": c.tool, "arguments": c.args})
				args = append(args, string(b))
				mine = append(mine, i)
			}
		}
		args = append(append(args, "--", binary), append(serve, surface)...)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, node, args...).Output()
		cancel()
		if err != nil {
			t.Fatalf("TypeScript client: %v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(mine) {
			t.Fatalf("TypeScript client printed %d results for %d calls:\n%s", len(lines), len(mine), out)
		}
		for j, line := range lines {
			c := calls[mine[j]]
			var r struct {
				OK                bool           `json:"ok"`
				IsError           bool           `json:"isError"`
				StructuredContent map[string]any `json:"structuredContent"`
				Error             string         `json:"error"`
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("TypeScript client printed %q: %v", line, err)
			}
			if !r.OK || r.IsError {
				t.Errorf("%s:%s %v: the TypeScript client rejected the result: %s", c.surface, c.tool, c.args, r.Error)
				continue
			}
			switch w := c.want.(type) {
			case string:
				if r.StructuredContent == nil || r.StructuredContent["unparsed"] == nil {
					t.Errorf("%s:%s %v: structuredContent = %v, want {result: null, unparsed: …}", c.surface, c.tool, c.args, r.StructuredContent)
				}
			case nil:
				if r.StructuredContent != nil {
					t.Errorf("%s:%s: structuredContent = %v for a text tool", c.surface, c.tool, r.StructuredContent)
				}
			default:
				if !reflect.DeepEqual(r.StructuredContent, w) {
					t.Errorf("%s:%s %v: structuredContent = %v, want %v", c.surface, c.tool, c.args, r.StructuredContent, w)
				}
			}
		}
	}
}
