package workspace

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// pack wraps command YAML (indented for a command's fields) into a
// workspace with one pack holding one command c.
func pack(fields string) string {
	return "version: 1\ncommand_packs:\n  - id: p\n    commands:\n      - id: c\n" + fields
}

// nested returns n levels of flow lists around a scalar.
func nested(n int) string {
	return strings.Repeat("[", n) + "x" + strings.Repeat("]", n)
}

func TestParseYAMLEdgeCases(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		// wantErr is a substring of the error; "" means the load succeeds.
		wantErr string
		check   func(t *testing.T, ws *Workspace)
	}{
		{name: "empty file", src: "", wantErr: "x.yaml:1:1: the workspace file is empty"},
		{name: "only comments", src: "# nothing\n\n# here\n", wantErr: "x.yaml:1:1: the workspace file is empty"},
		{name: "only a document marker", src: "---\n", wantErr: "x.yaml:1:1: the workspace file is empty"},
		{name: "null document", src: "~\n", wantErr: "x.yaml:1:1: the workspace file is empty"},
		{name: "top-level scalar", src: "hello\n", wantErr: "x.yaml:1:1: a workspace file is a mapping of keys to values (version:, gateway:, command_packs:, ...), not a value"},
		{name: "top-level list", src: "- version: 1\n", wantErr: "not a list"},
		{name: "two documents", src: "version: 1\n---\nversion: 1\n", wantErr: "x.yaml:2:1: a workspace file holds one YAML document"},
		{name: "syntax error in the second document", src: "version: 1\n---\n[\n", wantErr: "YAML syntax"},
		{name: "tab indentation", src: "version: 1\ngateway:\n\tlisten: a:1\n", wantErr: "x.yaml:3:1: YAML syntax"},
		{name: "tab inside a value is text", src: "version: 1\ncommand_packs:\n  - id: p\n    description: \"a\\tb\"\n    commands: [{id: c, argv: [printf, \"a\\tb\"]}]\n",
			check: func(t *testing.T, ws *Workspace) {
				if got := ws.CommandPacks[0].Commands[0].Argv[1]; got != "a\tb" {
					t.Errorf("argv[1] = %q, want a tab between a and b", got)
				}
			}},
		{name: "CRLF line endings and a BOM", src: "\ufeffversion: 1\r\nagents:\r\n  - id: a\r\n",
			check: func(t *testing.T, ws *Workspace) {
				if ws.Agents[0].ID != "a" || ws.Agents[0].Pos.Line != 3 {
					t.Errorf("agent = %q at %s, want a at line 3", ws.Agents[0].ID, ws.Agents[0].Pos)
				}
			}},
		{name: "merge key at the top", src: "version: 1\n<<: {gateway: {}}\n", wantErr: "x.yaml:2:1: YAML merge keys (<<) are not supported in workspace"},
		{name: "merge key in a grant", src: "version: 1\nagents: [{id: a, grants: [{<<: {op: pack:p}}]}]\n", wantErr: "YAML merge keys (<<) are not supported"},
		{name: "merge key in a constraint", src: "version: 1\nagents: [{id: a, grants: [{op: x, param_constraints: {p: {<<: {maximum: 1}}}}]}]\n", wantErr: "YAML merge keys (<<) are not supported"},
		{name: "merge key in an enum value", src: "version: 1\nagents: [{id: a, grants: [{op: x, param_constraints: {p: {enum: [{<<: {a: 1}}]}}}]}]\n", wantErr: "YAML merge keys (<<) are not supported"},
		{name: "quoted << is an ordinary key", src: "version: 1\n\"<<\": 1\n", wantErr: "unknown field \"<<\" in workspace"},
		{name: "list as a key", src: "version: 1\n? [a, b]\n: c\n", wantErr: "x.yaml:2:3: workspace: keys must be plain strings, not a list"},
		{name: "aliased key", src: "version: 1\ncredentials: {&n tok: {env: A}}\ncommand_packs: [{id: p, env: {*n : \"{credential.tok}\"}, commands: [{id: c, argv: [x]}]}]\n",
			check: func(t *testing.T, ws *Workspace) {
				if got := ws.CommandPacks[0].Env["tok"]; got != "{credential.tok}" {
					t.Errorf("env = %v, want the aliased key tok", ws.CommandPacks[0].Env)
				}
			}},
		{name: "nulls leave optional fields unset", src: "version: 1\ngateway: ~\ncredentials:\nmcp_servers: null\ncommand_packs: [{id: p, description: ~, timeout: ~, env: ~, commands: [{id: c, argv: [x], inputs: ~, scopes: ~}]}]\n",
			check: func(t *testing.T, ws *Workspace) {
				p := ws.CommandPacks[0]
				if p.Description != "" || p.Timeout != 0 || p.Env != nil || p.Commands[0].Inputs != nil || len(ws.MCPServers) != 0 {
					t.Errorf("nulls decoded to values: %+v", p)
				}
			}},
		{name: "null inside a schema is kept", src: pack("        argv: [x]\n        inputs: {type: object, properties: {a: {default: null}}}\n"),
			check: func(t *testing.T, ws *Workspace) {
				a := ws.CommandPacks[0].Commands[0].Inputs["properties"].(map[string]any)["a"].(map[string]any)
				if v, ok := a["default"]; !ok || v != nil {
					t.Errorf("default = %v (present %v), want a present nil", v, ok)
				}
			}},
		{name: "scalars keep their text as strings", src: "version: 1\nmcp_servers: [{id: 123, command: [server, 010, 0x1F, 1e3, true, 2025-06-18, ~x], protocol_version: 2025-06-18, env: {PORT: 8080}}]\n",
			check: func(t *testing.T, ws *Workspace) {
				s := ws.MCPServers[0]
				want := []string{"server", "010", "0x1F", "1e3", "true", "2025-06-18", "~x"}
				if s.ID != "123" || !reflect.DeepEqual(s.Command, want) || s.ProtocolVersion != "2025-06-18" || s.Env["PORT"] != "8080" {
					t.Errorf("got id %q command %q protocol %q env %v", s.ID, s.Command, s.ProtocolVersion, s.Env)
				}
			}},
		{name: "numbers in schemas become JSON numbers", src: pack("        argv: [x]\n        inputs: {type: object, maximum: 0x10, minimum: -1_000, multipleOf: 0.5, big: 18446744073709551615, s: \"12\"}\n"),
			check: func(t *testing.T, ws *Workspace) {
				in := ws.CommandPacks[0].Commands[0].Inputs
				want := map[string]any{"type": "object", "maximum": 16.0, "minimum": -1000.0, "multipleOf": 0.5, "big": 18446744073709551615.0, "s": "12"}
				if !reflect.DeepEqual(in, want) {
					t.Errorf("inputs = %#v, want %#v", in, want)
				}
			}},
		{name: "infinity is not JSON", src: pack("        argv: [x]\n        inputs: {maximum: .inf}\n"), wantErr: "x.yaml:7:27: workspace.command_packs[0].commands[0].inputs.maximum: \".inf\" is not a number JSON can hold"},
		{name: "NaN constraint", src: "version: 1\nagents: [{id: a, grants: [{op: x, param_constraints: {p: {maximum: .nan}}}]}]\n", wantErr: "is not a number JSON can hold"},
		{name: "quoted number where a number is needed", src: "version: 1\nagents: [{id: a, grants: [{op: x, param_constraints: {max_p: \"3\"}}]}]\n", wantErr: "max_p must be a number"},
		{name: "quoted version", src: "version: \"1\"\n", wantErr: "workspace.version must be a whole number"},
		{name: "quoted bool", src: "version: 1\nmcp_servers: [{id: s, url: http://h/mcp, trust_annotations: \"true\"}]\n", wantErr: "must be true or false"},
		{name: "yes is not a bool", src: "version: 1\nmcp_servers: [{id: s, url: http://h/mcp, trust_annotations: yes}]\n", wantErr: "must be true or false, not \"yes\""},
		{name: "block and flow styles mix", src: "version: 1\ncommand_packs:\n- id: p\n  commands: [{id: c, argv: [a,\n    b]}]\n",
			check: func(t *testing.T, ws *Workspace) {
				if got := ws.CommandPacks[0].Commands[0].Argv; !reflect.DeepEqual(got, []string{"a", "b"}) {
					t.Errorf("argv = %q", got)
				}
			}},
		{name: "literal and folded blocks", src: pack("        description: >-\n          one\n          two\n        argv:\n          - |-\n            line1\n            line2\n"),
			check: func(t *testing.T, ws *Workspace) {
				c := ws.CommandPacks[0].Commands[0]
				if c.Description != "one two" || c.Argv[0] != "line1\nline2" {
					t.Errorf("description %q argv %q", c.Description, c.Argv)
				}
			}},
		{name: "500 levels of nesting", src: pack("        argv: [x]\n        inputs: {default: " + nested(500) + "}\n")},
		{name: "2000 levels of nesting", src: pack("        argv: [x]\n        inputs: {default: " + nested(2000) + "}\n"), wantErr: "nested more than 1000 levels deep"},
		{name: "deeper than the YAML parser allows", src: pack("        argv: [x]\n        inputs: {default: " + nested(20000) + "}\n"), wantErr: "exceeded max depth"},
		{name: "alias of a list where a mapping is needed", src: "version: 1\nx: &l [a]\n", wantErr: "unknown field \"x\""},
		{name: "alias reused in typed fields", src: "version: 1\ncommand_packs:\n  - id: p\n    env: &e {A: \"1\"}\n    commands: [{id: c, argv: &a [x, y]}, {id: d, argv: *a}]\n  - id: q\n    env: *e\n    commands: [{id: c, argv: *a}]\n",
			check: func(t *testing.T, ws *Workspace) {
				q := ws.CommandPacks[1]
				if q.Env["A"] != "1" || !reflect.DeepEqual(q.Commands[0].Argv, []string{"x", "y"}) || len(q.Commands[0].ArgvPos) != 2 {
					t.Errorf("aliased values not decoded: env %v argv %q argvPos %v", q.Env, q.Commands[0].Argv, q.Commands[0].ArgvPos)
				}
				ws.CommandPacks[0].Commands[0].Argv[0] = "changed"
				if ws.CommandPacks[0].Commands[1].Argv[0] != "x" {
					t.Errorf("aliased lists share storage")
				}
			}},
		{name: "alias of an agent where a grant goes", src: "version: 1\nagents:\n  - &a {id: x, grants: [*a]}\n", wantErr: "x.yaml:3:16: unknown field \"grants\" in workspace.agents[0].grants[0]"},
		{name: "alias cycle through a constraint", src: "version: 1\nagents:\n  - id: a\n    grants:\n      - &g {op: x, param_constraints: {p: {const: *g}}}\n", wantErr: "x.yaml:5:51: alias *g is used inside its own anchor &g"},
		{name: "alias cycle through a list", src: "version: 1\nagents: &l [{id: x}, *l]\n", wantErr: "workspace.agents[1] must be a mapping of keys to values, not a list"},
		{name: "list items that are not declarations", src: "version: 1\nmcp_servers: [0]\ncommand_packs: [[x]]\nagents: [a]\ngateway: {approvals: {rules: [r]}}\n", wantErr: "workspace.mcp_servers[0] must be a mapping"},
		{name: "unknown anchor", src: "version: 1\nagents:\n  - id: a\n    grants: [*nope]\n", wantErr: "x.yaml:4:14: YAML syntax: unknown anchor 'nope' referenced"},
		{name: "over the size cap", src: "version: 1\n#" + strings.Repeat("x", MaxFileBytes), wantErr: "x.yaml:1:1: the workspace file is larger than 8 MiB"},
		{name: "invalid UTF-8", src: "version: 1\nagents: [{id: \"\xff\"}]\n", wantErr: "YAML syntax"},
		{name: "credentials_ref as one name", src: "version: 1\ncredentials: {t: {env: T}}\ncommand_packs: [{id: p, credentials_ref: t, commands: [{id: c, argv: [x]}]}]\n",
			check: func(t *testing.T, ws *Workspace) {
				if got := ws.CommandPacks[0].CredentialsRef; !reflect.DeepEqual(got, []string{"t"}) {
					t.Errorf("credentials_ref = %q, want [t]", got)
				}
			}},
		// FuzzLoad found these: a struct written as a scalar was checked for
		// what it lacks with no position to name.
		{name: "jwt as a scalar", src: "gateway:\n  identity:\n   jwt: 0\n", wantErr: "x.yaml:3:9: workspace.gateway.identity.jwt must be a mapping"},
		{name: "postgres as a scalar", src: "version: 1\ngateway: {state: {postgres: 0}}\n", wantErr: "x.yaml:2:29: workspace.gateway.state.postgres must be a mapping"},
		{name: "a rule as a scalar", src: "version: 1\ngateway: {approvals: {rules: [0]}}\n", wantErr: "must be a mapping"},
		{name: "credentials_ref as a mapping", src: "version: 1\ncommand_packs: [{id: p, credentials_ref: {t: 1}, commands: [{id: c, argv: [x]}]}]\n", wantErr: "credentials_ref must be a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, err := Parse("x.yaml", []byte(tt.src))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if tt.check != nil {
					tt.check(t, ws)
				}
				return
			}
			if err == nil {
				t.Fatalf("Parse succeeded, want an error containing %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
			for _, e := range AsList(err) {
				if e.Pos.Line <= 0 || e.Pos.Col <= 0 {
					t.Errorf("error without a position: %v", e)
				}
			}
		})
	}
}

// TestFlowAndBlockEqual checks that the same workspace written in block and
// in flow style decodes to the same declarations.
func TestFlowAndBlockEqual(t *testing.T) {
	t.Parallel()
	block := `version: 1
credentials:
  tok:
    env: TOK
command_packs:
  - id: p
    env:
      TOK: "{credential.tok}"
    credentials_ref:
      - tok
    commands:
      - id: c
        argv:
          - cat
          - "{f}"
        inputs:
          type: object
          properties:
            f:
              type: string
        effects: read
agents:
  - id: a
    grants:
      - pack:p
      - op: tool:p:c
        param_constraints:
          f:
            enum:
              - x
              - 1
`
	flow := `{version: 1, credentials: {tok: {env: TOK}}, command_packs: [{id: p, env: {TOK: "{credential.tok}"}, credentials_ref: [tok],
  commands: [{id: c, argv: [cat, "{f}"], inputs: {type: object, properties: {f: {type: string}}}, effects: read}]}],
  agents: [{id: a, grants: [pack:p, {op: "tool:p:c", param_constraints: {f: {enum: [x, 1]}}}]}]}
`
	a, err := Parse("block.yaml", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("flow.yaml", []byte(flow))
	if err != nil {
		t.Fatal(err)
	}
	if ja, jb := withoutPositions(t, a), withoutPositions(t, b); ja != jb {
		t.Errorf("block and flow differ:\n%s\n%s", ja, jb)
	}
}

// withoutPositions renders ws as JSON without the fields that say where or
// from which bytes it was read.
func withoutPositions(t *testing.T, ws *Workspace) string {
	t.Helper()
	data, err := json.Marshal(ws)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range []string{"Pos", "KeyPos", "ArgvPos", "Revision", "Path"} {
				delete(v, k)
			}
			for _, e := range v {
				strip(e)
			}
		case []any:
			for _, e := range v {
				strip(e)
			}
		}
	}
	strip(v)
	out, _ := json.Marshal(v)
	return string(out)
}

// TestAliasExpansionBounded feeds "billion laughs" documents, which expand
// to about 10^9 values through aliases (and a file that is one huge line),
// and checks the load stops quickly with little memory. It is not
// parallel, so the memory and CPU figures are its own; the bound is on the
// process's CPU time, which other work on a shared machine does not add to
// as it does to wall time.
func TestAliasExpansionBounded(t *testing.T) {
	var untyped strings.Builder
	untyped.WriteString(pack("        argv: [x]\n        inputs:\n"))
	untyped.WriteString(`          a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]` + "\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&untyped, "          a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}

	var typed strings.Builder
	typed.WriteString("version: 1\nx:\n  - &e0 [a, b, c, d, e, f, g, h, i, j]\n")
	typed.WriteString("  - &e1 [*e0,*e0,*e0,*e0,*e0,*e0,*e0,*e0,*e0,*e0]\n")
	typed.WriteString("  - &c {enum: [*e1,*e1,*e1,*e1,*e1,*e1,*e1,*e1,*e1,*e1]}\n")
	typed.WriteString("  - &g {op: x, param_constraints: {p0: *c, p1: *c, p2: *c, p3: *c, p4: *c, p5: *c, p6: *c, p7: *c, p8: *c, p9: *c}}\n")
	typed.WriteString("  - &a {id: a, grants: [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]}\n")
	typed.WriteString("agents: [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n")

	// One line of about 1 MB holding a whole flow list: columns must cost
	// linear time. A parser that recounted the line for each column would
	// take some 10^10 steps here, far past the bound; yaml.v3 takes about
	// 0.1 s of CPU (1 s under -race).
	var longLine strings.Builder
	longLine.WriteString("version: 1\nx: [")
	for i := range 100_000 {
		fmt.Fprintf(&longLine, "é%d, ", i)
	}
	longLine.WriteString("end]\n")

	var errorFlood strings.Builder
	errorFlood.WriteString("version: 1\nx: &bad {op: x, nope: 1}\nagents:\n")
	for i := range 100 {
		fmt.Fprintf(&errorFlood, "  - {id: a%d, grants: [*bad,*bad,*bad,*bad,*bad,*bad,*bad,*bad,*bad,*bad]}\n", i)
	}

	tests := []struct{ name, src, want string }{
		{"untyped schema", untyped.String(), "expands to too many values through YAML aliases"},
		{"typed grants", typed.String(), "expands to too many values through YAML aliases"},
		{"error flood", errorFlood.String(), "too many errors (500 or more)"},
		{"one long line", longLine.String(), `unknown field "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := cpuTime(t)
			_, err := Parse("bomb.yaml", []byte(tt.src))
			elapsed := cpuTime(t) - start
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %.300v, want an error containing %q", err, tt.want)
			}
			if n := len(AsList(err)); n > maxErrors+1 {
				t.Errorf("%d errors, want at most %d", n, maxErrors+1)
			}
			if mib := (after.TotalAlloc - before.TotalAlloc) >> 20; mib > 256 {
				t.Errorf("Parse allocated %d MiB, want the expansion bounded well below that", mib)
			}
			if elapsed > 5*time.Second {
				t.Errorf("Parse took %v of CPU, want the expansion bounded", elapsed)
			}
			t.Logf("%s: %v of CPU, %d MiB allocated", tt.name, elapsed, (after.TotalAlloc-before.TotalAlloc)>>20)
		})
	}
}

// TestExpansionBudget: a file that can hold an alias (it has a '*') gets
// the bounded budget, whatever else it holds; only a file without any '*'
// skips counting its nodes.
func TestExpansionBudget(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		nodes     int // 0: unbounded
	}{
		{"alias", "a: &x [1, 2]\nb: *x\n", 7},
		{"merge key", "a: &x {k: 1}\nb: {<<: *x}\n", 9},
		{"star in a string only", "a: \"tool:s:*\"\n", 3},
		{"no star", "a: [1, 2]\nb: {k: v}\n", 0},
	}
	for _, tt := range tests {
		root, errs := parseDocument("b.yaml", []byte(tt.src))
		if errs != nil {
			t.Fatalf("%s: %v", tt.name, errs)
		}
		want := math.MaxInt
		if tt.nodes > 0 {
			if n := countNodes(root); n != tt.nodes {
				t.Fatalf("%s: %d nodes, the table says %d", tt.name, n, tt.nodes)
			}
			want = 2*tt.nodes + minAliasAllowance
		}
		if got := expansionBudget([]byte(tt.src), root); got != want {
			t.Errorf("%s: budget %d, want %d", tt.name, got, want)
		}
	}
}
