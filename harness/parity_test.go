package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

func TestParityRows(t *testing.T) {
	t.Parallel()
	_, p := load(t, "testdata/parity/toolgate.yaml")
	cases := []struct {
		name        string
		row         SpecRow
		verdict     Verdict
		harnessOnly string
		grantOnly   string
		note        []string
	}{
		{name: "equal", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx__query", "mcp__jx__echo"}}, verdict: Green},
		{name: "wider by one tool", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx__query", "mcp__jx__echo", "mcp__jx__wipe"}},
			verdict: Red, harnessOnly: "tool:jx:wipe", note: []string{"beyond the grant: tool:jx:wipe"}},
		{name: "narrower than the grant", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx__query"}},
			verdict: Red, grantOnly: "tool:jx:echo", note: []string{"does not allow 1 the grant holds: tool:jx:echo"}},
		{name: "surface wildcard expands to the write too", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx"}}, verdict: Red, harnessOnly: "tool:jx:wipe"},
		{name: "server wildcards on both sides", row: SpecRow{Agent: "builder", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__mem__*", "mcp__far"}}, verdict: Green},
		{name: "declared server tools cover a wildcard", row: SpecRow{Agent: "builder", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__mem__read_graph", "mcp__mem__store", "mcp__far"}}, verdict: Green},
		{name: "unknown server compared at the wildcard", row: SpecRow{Agent: "builder", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__mem", "mcp__far__search"}}, verdict: Red, grantOnly: "tool:far:*"},
		{name: "no grant", row: SpecRow{Agent: "idle", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx__query"}}, verdict: Red, harnessOnly: "tool:jx:query", note: []string{`no grant: agent "idle" holds no grant`}},
		{name: "agent not declared", row: SpecRow{Agent: "nobody", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{}}, verdict: Red, note: []string{`no grant: agent "nobody" is not declared`}},
		{name: "bash:git is unrecognised", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx__query", "mcp__jx__echo", "bash:git"}},
			verdict: Red, note: []string{`unrecognised entry "bash:git"`, "Bash(git:*)"}},
		{name: "harness tools are outside any grant", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"mcp__jx__query", "mcp__jx__echo", "Bash(git:*)", "Read"}},
			verdict: Red, harnessOnly: "tool:harness:Read,tool:shell:git"},
		{name: "claude skips unanchored globs", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"*", "mcp__*", "mcp__jx__query", "mcp__jx__echo"}},
			verdict: Green, note: []string{`skips the unanchored glob "*"`, `skips the unanchored glob "mcp__*"`}},
		{name: "claude grants nothing with only a glob", row: SpecRow{Agent: "reader", Provider: Claude, HasAllowedTools: true,
			AllowedTools: []string{"*"}}, verdict: Red, grantOnly: "tool:jx:echo,tool:jx:query", note: []string{"grants nothing"}},
		{name: "codex star allows everything", row: SpecRow{Agent: "reader", Provider: Codex, HasAllowedTools: true,
			AllowedTools: []string{"*"}}, verdict: Red, harnessOnly: "tool:*", note: []string{"allows every tool (tool:*)"}},
		{name: "argv with allowedTools", row: SpecRow{Agent: "editor", Provider: Claude,
			Argv: []string{"claude", "-p", "--allowedTools", "mcp__jx__query", "mcp__jx__wipe", "--output-format", "json"}}, verdict: Green},
		{name: "argv without the flag", row: SpecRow{Agent: "editor", Provider: Claude, Argv: []string{"claude", "-p"}},
			verdict: Red, grantOnly: "tool:jx:query,tool:jx:wipe", note: []string{"pre-approves nothing"}},
		{name: "claude settings", row: SpecRow{Agent: "builder", Provider: Claude, Settings: "testdata/parity/.claude/settings.json"},
			verdict: Green, note: []string{"permissions.deny (Bash) is not subtracted"}},
		{name: "codex config.toml", row: SpecRow{Agent: "coder", Provider: Codex, ConfigTOML: "testdata/parity/config.toml"}, verdict: Green},
		{name: "gemini settings", row: SpecRow{Agent: "reader", Provider: Gemini, Settings: "testdata/parity/gemini.json"}, verdict: Green},
		{name: "missing settings file", row: SpecRow{Agent: "reader", Provider: Claude, Settings: "testdata/parity/nope.json"},
			verdict: Red, note: []string{"cannot read the allowlist", "nope.json"}},
		{name: "stub", row: SpecRow{Agent: "ghost", Provider: Claude, Stub: &Stub{LoadError: "yaml: line 3: mapping values are not allowed here"}},
			verdict: Unknown, note: []string{"yaml: line 3: mapping values are not allowed here"}},
		{name: "codex without a list", row: SpecRow{Agent: "coder", Provider: Codex}, verdict: Unknown, note: []string{"no enforceable allowlist", "config_toml"}},
		{name: "cursor", row: SpecRow{Agent: "reader", Provider: Cursor, HasAllowedTools: true, AllowedTools: []string{"mcp__jx__query"}},
			verdict: Unknown, note: []string{"cursor cannot enforce"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			row := tc.row
			rep := Check(p, &Spec{Rows: []*SpecRow{&row}})
			got := rep.Rows[0]
			if got.Verdict != tc.verdict {
				t.Errorf("verdict = %s, want %s (note: %s)", got.Verdict, tc.verdict, got.Note)
			}
			if h := strings.Join(got.Delta.HarnessOnly, ","); h != tc.harnessOnly {
				t.Errorf("harness only = %q, want %q", h, tc.harnessOnly)
			}
			if tc.grantOnly != "" || tc.verdict == Green {
				if g := strings.Join(got.Delta.GrantOnly, ","); g != tc.grantOnly {
					t.Errorf("grant only = %q, want %q", g, tc.grantOnly)
				}
			}
			for _, n := range tc.note {
				if !strings.Contains(got.Note, n) {
					t.Errorf("note %q does not contain %q", got.Note, n)
				}
			}
			wantRun := Green
			if tc.verdict != Green {
				wantRun = Red // one red row, or the only row unknown
			}
			if rep.Run != wantRun {
				t.Errorf("run = %s, want %s", rep.Run, wantRun)
			}
		})
	}
}

// A workspace cannot hold tool:* (it is refused at load), so a grant
// holding it is built at the parity level: Compare takes the capabilities
// directly.
func TestParityGrantHoldingAll(t *testing.T) {
	t.Parallel()
	row := Compare(Comparison{Agent: "root", Provider: Claude, Entries: []string{"mcp__jx__query"},
		Grant: []grantcheck.Capability{{Kind: grantcheck.KindAll}}})
	if row.Verdict != Red || !strings.Contains(row.Note, "the grant holds tool:*") {
		t.Errorf("verdict %s, note %q", row.Verdict, row.Note)
	}
	if strings.Join(row.Delta.GrantOnly, ",") != "tool:*" || len(row.Delta.HarnessOnly) != 0 {
		t.Errorf("delta = %+v", row.Delta)
	}
}

func TestParityRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		verdicts []Verdict
		want     Verdict
	}{
		{[]Verdict{Green, Green}, Green},
		{[]Verdict{Green, Unknown}, Green},
		{[]Verdict{Green, Red, Unknown}, Red},
		{[]Verdict{Unknown, Unknown}, Red},
		{nil, Red},
	}
	for _, tc := range cases {
		var rows []Row
		for _, v := range tc.verdicts {
			rows = append(rows, Row{Verdict: v})
		}
		if got := runVerdict(rows); got != tc.want {
			t.Errorf("runVerdict(%v) = %s, want %s", tc.verdicts, got, tc.want)
		}
	}
}

func TestParityReportGolden(t *testing.T) {
	t.Parallel()
	_, p := load(t, "testdata/parity/toolgate.yaml")
	spec, err := LoadSpec("testdata/parity/HARNESS.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rep := Check(p, spec)
	if rep.Run != Red {
		t.Errorf("run = %s, want red (the idle row has no grant and an unrecognised entry)", rep.Run)
	}
	var text, js bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	golden(t, "parity/report.txt", text.Bytes())
	golden(t, "parity/report.json", js.Bytes())
}

func TestAllowedToolsFromArgv(t *testing.T) {
	t.Parallel()
	cases := []struct {
		argv  []string
		want  string
		found bool
	}{
		{[]string{"claude", "-p", "--allowed-tools", "a,b"}, "a|b", true},
		{[]string{"claude", "--allowedTools", "a b", "c", "-p", "hi"}, "a|b|c", true},
		{[]string{"claude", "--allowed-tools=Bash(git log:*),Read", "--allowedTools", "Edit"}, "Bash(git log:*)|Read|Edit", true},
		{[]string{"claude", "-p", "x"}, "", false},
	}
	for _, tc := range cases {
		got, found := AllowedToolsFromArgv(tc.argv)
		if strings.Join(got, "|") != tc.want || found != tc.found {
			t.Errorf("AllowedToolsFromArgv(%q) = %q, %v; want %q, %v", tc.argv, got, found, tc.want, tc.found)
		}
	}
}

func TestLoadSpecErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "HARNESS.yaml")
	src := `agents:
  - agent: a
    provider: claude
    allowed_tools: [x]
    settings: s.json
  - agent: b
    provider: windsurf
  - provider: codex
    argv: [codex]
  - agent: c
    provider: claude
    allow: [x]
  - agent: d
    provider: cursor
    stub: {error: x}
extra: 1
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadSpec(path, nil)
	list := workspace.AsList(err)
	want := []string{
		path + ":2:5: give one allowlist source per row, not allowed_tools and settings",
		path + `:7:15: provider: unknown harness "windsurf"`,
		path + ":8:5: agent: is required",
		path + ":8:5: argv: --allowed-tools is Claude Code's flag; for codex give allowed_tools or config_toml",
		path + `:12:5: unknown field "allow"`,
		path + `:15:12: unknown field "error" in stub`,
		path + ":15:11: stub: load_error is required",
		path + `:16:1: unknown field "extra"`,
	}
	got := list.Error()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("errors do not contain %q:\n%s", w, got)
		}
	}
}

func TestLoadSpecPaths(t *testing.T) {
	t.Parallel()
	spec, err := LoadSpec("testdata/parity/HARNESS.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Rows[2].Settings; got != filepath.Join("testdata", "parity", ".claude", "settings.json") {
		t.Errorf("settings resolved to %q", got)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "h.yaml")
	if err := os.WriteFile(path, []byte("agents:\n  - {agent: coder, provider: codex, config_toml: ~/.codex/config.toml}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec, err = LoadSpec(path, func(k string) string { return map[string]string{"HOME": "/home/me"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	if got := spec.Rows[0].ConfigTOML; got != "/home/me/.codex/config.toml" {
		t.Errorf("~ expanded to %q", got)
	}
}
