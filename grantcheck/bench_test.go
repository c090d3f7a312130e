package grantcheck

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchWorkspace declares an agent holding 1,000 capabilities: 999 exact
// grants on an MCP server's tools and the called pack command, whose grant
// binds five parameters. fifth is the fifth constraint; schemaExtra is
// added to the "name" property of the command's input schema.
func benchWorkspace(fifth, schemaExtra string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `
version: 1
mcp_servers:
  - id: big
    command: [big-server]
    permission: open
command_packs:
  - id: p
    permission: open
    commands:
      - id: op
        argv: [op, "{mode}", "{name}", "{count}", "{label}", "{fifth}"]
        inputs:
          type: object
          properties:
            mode: {type: string, enum: [fast, slow, auto]}
            name: {type: string%s}
            count: {type: integer, minimum: 0}
            label: {type: string}
            fifth: {type: string}
          required: [mode, name, count, label, fifth]
          additionalProperties: false
        effects: read
agents:
  - id: a
    grants:
`, schemaExtra)
	for i := range 999 {
		fmt.Fprintf(&b, "      - tool:big:tool_%03d\n", i)
	}
	fmt.Fprintf(&b, `      - op: tool:p:op
        param_constraints:
          mode: {enum: [fast, auto]}
          name: {pattern: "[a-z][a-z0-9_-]*"}
          count: {minimum: 1, maximum: 100}
          label: {max_length: 32}
          fifth: %s
`, fifth)
	return b.String()
}

type benchCase struct {
	name        string
	fifth       string
	schemaExtra string
	fifthValue  string
}

func benchCases(dir string) []benchCase {
	return []benchCase{
		{"flat-schema", "{const: v1}", "", "v1"},
		{"format-schema", "{const: v1}", ", format: hostname", "v1"},
		{"path_within", "{path_within: " + dir + "}", "", dir + "/sub/file.json"},
	}
}

func benchPolicy(tb testing.TB, c benchCase) (*Policy, map[string]any) {
	p := compileYAML(tb, benchWorkspace(c.fifth, c.schemaExtra))
	if n := len(p.agents["a"].grants); n != 1000 {
		tb.Fatalf("agent holds %d capabilities, want 1000", n)
	}
	args := map[string]any{"mode": "auto", "name": "build_42", "count": 7.0, "label": "nightly", "fifth": c.fifthValue}
	if d := p.Decide("a", "p", "op", args); d.Outcome != Allow {
		tb.Fatalf("%s: %+v", c.name, d)
	}
	return p, args
}

func benchDir(tb testing.TB) string {
	dir, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func BenchmarkDecide(b *testing.B) {
	for _, c := range benchCases(benchDir(b)) {
		b.Run(c.name, func(b *testing.B) {
			p, args := benchPolicy(b, c)
			b.ReportAllocs()
			for b.Loop() {
				if d := p.Decide("a", "p", "op", args); d.Outcome != Allow {
					b.Fatal(d.Reason)
				}
			}
		})
	}
}

// TestDecideAllocations pins the allocation budget of the allow path that
// BenchmarkDecide measures, so a regression fails a plain `go test`. The
// budget is the measured figure: 37 allocations per call in a plain build
// and 39 under -race (how the suite runs), every one of them in the JSON
// Schema library's Validate (the decision around it allocates none).
// Compiling the schema per call instead of once at load would cost about
// 870 more, so this test also holds compile-once. It cannot run in
// parallel: AllocsPerRun counts the whole process.
func TestDecideAllocations(t *testing.T) {
	c := benchCases(benchDir(t))[0]
	p, args := benchPolicy(t, c)
	if n := testing.AllocsPerRun(200, func() { p.Decide("a", "p", "op", args) }); n > 39 {
		t.Errorf("Decide allocates %.0f times per call on the allow path, budget 39", n)
	}
}
