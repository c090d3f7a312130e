package grantcheck

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

func indentJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

const narrowWorkspace = `
version: 1
mcp_servers:
  - id: kv
    command: [kv]
    effects: {get: read}
command_packs:
  - id: p
    permission: cautious
    commands:
      - id: op
        description: Do the thing.
        argv: [op, "{mode}", "{name}", "{n}", "{s}", "{path}", "{fixed}", "{extra}"]
        inputs:
          type: object
          properties:
            mode: {type: string, enum: [r, w, x]}
            name: {type: string, pattern: "^[a-z]"}
            n: {type: integer, minimum: 0, maximum: 100}
            s: {type: string, maxLength: 10}
            path: {type: string, description: The file.}
            fixed: {type: string}
            extra: {type: string}
          required: [mode]
        effects: write
      - id: other
        argv: [other]
        effects: read
agents:
  - id: a
    grants:
      - op: tool:p:op
        param_constraints:
          mode: {enum: [w, x, y]}
          name: {pattern: "[a-z]+"}
          n: {minimum: 5, maximum: 200}
          s: {max_length: 5}
          path: {path_within: /data}
          fixed: {const: v}
      - op: tool:kv:get
        param_constraints:
          key: {pattern: "user-[0-9]+"}
  - id: b
    grants: [pack:p]
`

func TestToolsNarrowSchemas(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, narrowWorkspace)
	original := append(json.RawMessage(nil), p.surfaces["p"].members["op"].schema.raw...)
	views := p.Tools("a", "")
	golden(t, "tools_a.golden.json", indentJSON(t, views))
	if !bytes.Equal(original, p.surfaces["p"].members["op"].schema.raw) {
		t.Error("narrowing modified the tool's own schema")
	}
	// The narrowed schema must accept exactly what Decide allows, for the
	// values it can express.
	ok := map[string]any{"mode": "w", "name": "abc", "n": 5.0, "s": "12345", "path": "/data/x", "fixed": "v"}
	if d := p.Decide("a", "p", "op", ok); d.Outcome != Approval {
		t.Errorf("Decide(valid) = %+v", d)
	}
	if len(views) != 2 || views[1].Name != "op" {
		t.Fatalf("a sees %+v, want kv:get and p:op", views)
	}
	narrowed, err := compileSchema("toolgate:///narrowed.json", views[1].InputSchema)
	if err != nil {
		t.Fatalf("the narrowed schema does not compile: %v", err)
	}
	if err := narrowed.lib.Validate(ok); err != nil {
		t.Errorf("narrowed schema refuses allowed arguments: %v", err)
	}
	for param, bad := range map[string]any{"mode": "r", "name": "abc1", "n": 4.0, "s": "123456", "fixed": "w"} {
		args := map[string]any{}
		for k, v := range ok {
			args[k] = v
		}
		args[param] = bad
		if narrowed.lib.Validate(args) == nil {
			t.Errorf("narrowed schema accepts %s=%v, which the grant refuses", param, bad)
		}
		if d := p.Decide("a", "p", "op", args); d.Outcome != Deny {
			t.Errorf("Decide(%s=%v) = %+v, want deny", param, bad, d)
		}
	}
	if got := p.Tools("b", "p"); len(got) != 1 || got[0].Name != "other" || got[0].Grant != "pack:p" {
		t.Errorf("b sees %+v, want only the read command", got)
	}
	if got := p.Tools("nobody", ""); got != nil {
		t.Errorf("an unknown agent sees %+v", got)
	}
}

// TestSummaryDemo uses a copy of the demo workspace, so that editing the
// demo does not silently rewrite what this test pins.
func TestSummaryDemo(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Load("testdata/demo_workspace.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_demo.golden.json", indentJSON(t, p.Summary()))
}

func TestSummaryServers(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, `
version: 1
mcp_servers:
  - id: memory
    command: [node, server.js]
    permission: cautious
    effects: {read_graph: read}
    permission_overrides: {delete_entities: strict}
agents:
  - id: a
    grants: [server:memory]
  - id: b
    grants: [tool:memory:create_entities]
`)
	golden(t, "summary_unlisted.golden.json", indentJSON(t, p.Summary()))
	listed, err := p.WithServerTools("memory", []ToolInfo{{Name: "read_graph"}, {Name: "create_entities"}, {Name: "delete_entities"}})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "summary_listed.golden.json", indentJSON(t, listed.Summary()))
	caps, err := listed.Capabilities("a")
	if err != nil || len(caps) != 1 || caps[0].String() != "tool:memory:*" {
		t.Errorf("Capabilities(a) = %v, %v", caps, err)
	}
	if _, err := listed.Capabilities("zed"); err == nil {
		t.Error("Capabilities of an unknown agent did not fail")
	}
}
