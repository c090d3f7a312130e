package grantcheck

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestCompileFixtures loads each testdata workspace and checks that the
// valid ones compile and the invalid ones report every broken grant at its
// FILE:LINE:COL with the rule it breaks.
func TestCompileFixtures(t *testing.T) {
	t.Parallel()
	type want struct {
		at   string // LINE:COL
		rule string // part of the message
	}
	tests := []struct {
		file string
		errs []want
	}{
		{"wildcard_valid.yaml", nil},
		{"wildcard_invalid.yaml", []want{
			{"13:9", "grant tool:*: a grant of every tool on every surface is refused"},
			{"14:9", "grant *: a grant of every tool on every surface is refused"},
		}},
		{"unknown_surface_valid.yaml", nil},
		{"unknown_surface_invalid.yaml", []want{
			{"15:9", `surface "filez" is not declared (declared surfaces: files, memory)`},
			{"16:9", `surface "memroy" is not declared`},
			{"17:9", `surface "nope" is not declared`},
			{"18:9", "the harness surface names tools the harness itself provides"},
		}},
		{"bulk_nothing_valid.yaml", nil},
		{"bulk_nothing_invalid.yaml", []want{
			{"17:9", `grant pack:notes matches nothing: pack "notes" has no command with effects: read`},
			{"18:9", `grant tool:notes:* matches nothing`},
		}},
		{"ambiguous_alias_valid.yaml", nil},
		{"ambiguous_alias_invalid.yaml", []want{
			{"17:9", `the alias "git-log-all" is ambiguous: it could be tool:git:log-all or tool:git-log:all`},
			{"18:9", `the alias "git-push" names no pack command`},
		}},
		{"undeclared_param_valid.yaml", nil},
		{"undeclared_param_invalid.yaml", []want{
			{"20:11", `param_constraints name parameter "file", which files:head does not declare in inputs.properties (it declares: lines, path)`},
			{"21:11", `param_constraints name parameter "count", which files:head does not declare`},
		}},
		{"duplicate_valid.yaml", nil},
		{"duplicate_invalid.yaml", []want{
			{"15:9", "files-cat grants tool:files:cat again (already granted by tool:files:cat at testdata/duplicate_invalid.yaml:14:9)"},
			{"17:9", `tool:files:* grants surface "files" again (already granted by pack:files`},
		}},
		{"path_within_layout_valid.yaml", nil},
		{"path_within_layout_invalid.yaml", []want{
			{"10:27", `command files:cat: argv element 2 "{dir}/{name}": {dir} is bound by path_within, a file the gateway opens itself beneath a root; the command receives it as a descriptor path (/dev/fd/N), and the text after it ("/{name}") would be resolved from that descriptor`},
			{"19:28", `command files:tail: argv element 2 "{name}{dir}": {dir} is bound by path_within, a file the gateway opens itself beneath a root; the placeholder {name} before it`},
			{"23:28", `command files:head: argv element 2 "{name}{dir}"`},
			{"30:17", `command files:save: output.write_to "{dir}/{name}"`},
		}},
		{"constraint_rules_invalid.yaml", []want{
			{"13:9", "command files:grep: inputs: invalid JSON Schema: at /properties/pattern/pattern: '((' is not valid regex"},
			{"20:9", "param_constraints bind one tool's parameters, so they are only allowed on a single-tool grant"},
			{"25:11", `parameter "path": pattern "a(b" is not a valid RE2 expression`},
			{"28:11", `parameter "n": minimum 5 is above maximum 1`},
			{"29:9", `"memory" is an MCP server, not a command pack; write server:memory`},
			{"30:9", `"files" is a command pack, not an MCP server; write pack:files`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join("testdata", tt.file)
			ws, err := workspace.Load(path)
			if err != nil {
				t.Fatalf("the fixture must load (its problems are grant problems): %v", err)
			}
			p, err := Compile(ws)
			if len(tt.errs) == 0 {
				if err != nil || p == nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if p != nil {
				t.Errorf("Compile returned a policy along with errors")
			}
			var list workspace.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("Compile error %v (%T) is not a workspace.ErrorList", err, err)
			}
			if len(list) != len(tt.errs) {
				t.Errorf("got %d errors, want %d:\n%v", len(list), len(tt.errs), err)
			}
			for i, w := range tt.errs {
				if i >= len(list) {
					break
				}
				if got, wantPos := list[i].Pos.String(), path+":"+w.at; got != wantPos {
					t.Errorf("error %d at %s, want %s (%s)", i, got, wantPos, list[i].Msg)
				}
				if !strings.Contains(list[i].Msg, w.rule) {
					t.Errorf("error %d: %q\n  does not contain %q", i, list[i].Msg, w.rule)
				}
			}
		})
	}
}
