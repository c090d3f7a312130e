package grantcheck

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalizeEntry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		entry string
		want  string // capability; "" when unrecognised
		back  string // HarnessEntry of the capability; "" when not expressible
		why   string // for unrecognised entries: part of the reason
	}{
		{entry: "mcp__mcpsrv_neotoma__store", want: "tool:mcpsrv_neotoma:store", back: "mcp__mcpsrv_neotoma__store"},
		{entry: "mcp__memory__read_graph", want: "tool:memory:read_graph", back: "mcp__memory__read_graph"},
		{entry: "mcp__json-tools__edit-in-place", want: "tool:json-tools:edit-in-place", back: "mcp__json-tools__edit-in-place"},
		{entry: "mcp__memory", want: "tool:memory:*", back: "mcp__memory"},
		{entry: "mcp__memory__*", want: "tool:memory:*", back: "mcp__memory"},
		{entry: "mcp__a_b_c__d_e", want: "tool:a_b_c:d_e", back: "mcp__a_b_c__d_e"},
		{entry: "mcp__a__b__c", want: "tool:a:b__c", back: "mcp__a__b__c"},
		{entry: "Read", want: "tool:harness:Read", back: "Read"},
		{entry: "Write", want: "tool:harness:Write", back: "Write"},
		{entry: "Edit", want: "tool:harness:Edit", back: "Edit"},
		{entry: "MultiEdit", want: "tool:harness:MultiEdit", back: "MultiEdit"},
		{entry: "Glob", want: "tool:harness:Glob", back: "Glob"},
		{entry: "Grep", want: "tool:harness:Grep", back: "Grep"},
		{entry: "LS", want: "tool:harness:LS", back: "LS"},
		{entry: "WebFetch", want: "tool:harness:WebFetch", back: "WebFetch"},
		{entry: "WebSearch", want: "tool:harness:WebSearch", back: "WebSearch"},
		{entry: "NotebookEdit", want: "tool:harness:NotebookEdit", back: "NotebookEdit"},
		{entry: "NotebookRead", want: "tool:harness:NotebookRead", back: "NotebookRead"},
		{entry: "TodoWrite", want: "tool:harness:TodoWrite", back: "TodoWrite"},
		{entry: "Task", want: "tool:harness:Task", back: "Task"},
		{entry: "Bash", want: "tool:shell:*", back: "Bash"},
		{entry: "Bash(git)", want: "tool:shell:git", back: "Bash(git:*)"},
		{entry: "Bash(git:*)", want: "tool:shell:git", back: "Bash(git:*)"},
		{entry: "Bash(git *)", want: "tool:shell:git", back: "Bash(git:*)"},
		{entry: "Bash(gh:*)", want: "tool:shell:gh", back: "Bash(gh:*)"},
		{entry: "*", want: "tool:*", back: "*"},
		{entry: "bash:git", why: "bash: prefix"},
		{entry: "mcp__*", why: "not a surface id"},
		{entry: "mcp__", why: "not a surface id"},
		{entry: "mcp____x", why: "not a surface id"},
		{entry: "mcp__memory__", why: "not a tool name"},
		{entry: "mcp__memory__re*d", why: "not a tool name"},
		{entry: "Bash(git status:*)", why: "does not name one command"},
		{entry: "Bash(*)", why: "does not name one command"},
		{entry: "Bash()", why: "does not name one command"},
		{entry: "Bash(rm -rf /)", why: "does not name one command"},
		{entry: "Read(./src/**)", why: "specifier on Read"},
		{entry: "WebFetch(domain:example.com)", why: "specifier on WebFetch"},
		{entry: "read", why: "expected mcp__"},
		{entry: "tool:memory:read", why: "expected mcp__"},
		{entry: "", why: "expected mcp__"},
	}
	for _, tt := range tests {
		t.Run(tt.entry, func(t *testing.T) {
			t.Parallel()
			c, err := NormalizeEntry(tt.entry)
			if tt.want == "" {
				var u *UnrecognisedError
				if !errors.As(err, &u) {
					t.Fatalf("NormalizeEntry(%q) = %v, %v; want an *UnrecognisedError", tt.entry, c, err)
				}
				if u.Entry != tt.entry || !strings.Contains(u.Reason, tt.why) {
					t.Fatalf("unrecognised %q: reason %q, want it to contain %q", u.Entry, u.Reason, tt.why)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeEntry(%q): %v", tt.entry, err)
			}
			if c.String() != tt.want {
				t.Fatalf("NormalizeEntry(%q) = %s, want %s", tt.entry, c, tt.want)
			}
			back, err := HarnessEntry(c)
			if err != nil {
				t.Fatalf("HarnessEntry(%s): %v", c, err)
			}
			if back != tt.back {
				t.Errorf("HarnessEntry(%s) = %q, want %q", c, back, tt.back)
			}
			again, err := NormalizeEntry(back)
			if err != nil || again != c {
				t.Errorf("NormalizeEntry(HarnessEntry(%s)) = %v, %v", c, again, err)
			}
		})
	}
}

func TestNormalizeEquivalences(t *testing.T) {
	t.Parallel()
	for _, group := range [][]string{
		{"Bash(git:*)", "Bash(git *)", "Bash(git)"},
		{"mcp__memory", "mcp__memory__*"},
	} {
		first, err := NormalizeEntry(group[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range group[1:] {
			c, err := NormalizeEntry(e)
			if err != nil || c != first {
				t.Errorf("NormalizeEntry(%q) = %v, %v; want %v like %q", e, c, err, first, group[0])
			}
		}
	}
}

func TestHarnessEntryNotExpressible(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c   Capability
		why string
	}{
		{Capability{Kind: KindPack, Surface: "json-tools"}, "read commands only"},
		{Capability{Kind: KindAlias, Alias: "json-tools-query"}, "alias"},
		{Capability{Kind: KindSurface, Surface: SurfaceHarness}, "every harness tool"},
		{Tool(SurfaceHarness, "read_file"), "CamelCase"},
		{Tool("a__b", "x"), "ambiguous"},
		{Tool("a_", "x"), "ambiguous"},
		{Tool("a.b", "x"), "must match"},
		{Tool("s", strings.Repeat("x", 60)), "must match"},
		{Capability{}, "invalid"},
	}
	for _, tt := range tests {
		_, err := HarnessEntry(tt.c)
		if !errors.Is(err, ErrNotExpressible) || !strings.Contains(err.Error(), tt.why) {
			t.Errorf("HarnessEntry(%+v) error = %v, want ErrNotExpressible mentioning %q", tt.c, err, tt.why)
		}
	}
	if e, err := HarnessEntry(Capability{Kind: KindServer, Surface: "memory"}); err != nil || e != "mcp__memory" {
		t.Errorf("HarnessEntry(server:memory) = %q, %v", e, err)
	}
}

func TestNormalizeList(t *testing.T) {
	t.Parallel()
	caps, bad := NormalizeList([]string{"Read", "bash:git", "mcp__memory", "mcp__*"})
	if len(caps) != 2 || caps[0] != Tool(SurfaceHarness, "Read") || caps[1] != (Capability{Kind: KindSurface, Surface: "memory"}) {
		t.Errorf("caps = %v", caps)
	}
	if len(bad) != 2 || bad[0].Entry != "bash:git" || bad[1].Entry != "mcp__*" {
		t.Errorf("unrecognised = %v, want bash:git and mcp__* reported", bad)
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"mcp__a__b", "mcp__a", "mcp__a__*", "Read", "Bash", "Bash(git:*)", "Bash(git *)", "*", "bash:git", "mcp__a___b", "mcp__a_", "Bash(a b)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := NormalizeEntry(s)
		if err != nil {
			var u *UnrecognisedError
			if !errors.As(err, &u) || u.Reason == "" || u.Entry != s {
				t.Fatalf("NormalizeEntry(%q) error %v is not a reasoned *UnrecognisedError", s, err)
			}
			return
		}
		if _, err := Parse(c.String()); err != nil {
			t.Fatalf("NormalizeEntry(%q) = %s, which does not parse: %v", s, c, err)
		}
		back, err := HarnessEntry(c)
		if err != nil {
			if !errors.Is(err, ErrNotExpressible) {
				t.Fatalf("HarnessEntry(%s): %v does not wrap ErrNotExpressible", c, err)
			}
			return
		}
		again, err := NormalizeEntry(back)
		if err != nil || again != c {
			t.Fatalf("%q → %s → %q → %v, %v", s, c, back, again, err)
		}
	})
}

// TestNormalizeName reads each harness's own spelling back to capabilities,
// against surfaces whose ids differ only where a harness's naming loses
// information: '-' and '_' (Codex), and a '_' inside a surface id
// (Gemini CLI, OpenCode).
func TestNormalizeName(t *testing.T) {
	t.Parallel()
	known := Known{
		"json-tools":     {"query", "keys", "edit-in-place"},
		"notes":          {"list", "remove"},
		"mcpsrv_neotoma": {"store", "retrieve_entities"},
		"far":            nil, // a server never listed
		// Two surfaces Codex cannot tell apart, and two whose OpenCode
		// and Gemini names collide (a + b_x, a_b + x).
		"dup-x": {"t"}, "dup_x": {"t"}, "a-b-c": {"t"}, "a_b-c": {"t"},
		"a": {"b_x", "y"}, "a_b": {"x"},
	}
	tests := []struct {
		naming Naming
		name   string
		want   string // capabilities joined by ","; "" when unrecognised
		why    string
	}{
		{NamingClaude, "mcp__json-tools__query", "tool:json-tools:query", ""},
		{NamingClaude, "mcp__notes", "tool:notes:*", ""},
		{NamingCodex, "mcp__json_tools__edit_in_place", "tool:json-tools:edit-in-place", ""},
		{NamingCodex, "mcp__json-tools__edit-in-place", "tool:json-tools:edit-in-place", ""},
		{NamingCodex, "mcp__json_tools", "tool:json-tools:*", ""},
		{NamingCodex, "mcp__far__search_all", "tool:far:search_all", ""},
		{NamingCodex, "mcp__other__x", "tool:other:x", ""},
		{NamingCodex, "mcp__dup_x__t", "tool:dup_x:t", ""},
		{NamingCodex, "mcp__dup-x__t", "tool:dup-x:t", ""},
		{NamingCodex, "mcp__a_b_c__t", "", "could be any of a-b-c, a_b-c"},
		{NamingCodex, "*", "tool:*", ""},
		{NamingCodex, "mcp__json_tools__re*d", "", "not a tool"},
		{NamingGemini, "mcp_json-tools_query", "tool:json-tools:query", ""},
		{NamingGemini, "mcp_mcpsrv_neotoma_retrieve_entities", "tool:mcpsrv_neotoma:retrieve_entities", ""},
		{NamingGemini, "mcp_json-tools_*", "tool:json-tools:*", ""},
		{NamingGemini, "mcp_far_search", "tool:far:search", ""},
		{NamingGemini, "mcp_other_x_y", "tool:other:x_y", ""},
		{NamingGemini, "mcp_*", "tool:*", ""},
		{NamingGemini, "mcp_a_y", "tool:a:y", ""},
		{NamingGemini, "mcp_a_b_x", "", "each of a, a_b"},
		{NamingGemini, "run_shell_command", "tool:shell:*", ""},
		{NamingGemini, "run_shell_command(git)", "tool:shell:git", ""},
		{NamingGemini, "run_shell_command(rm -rf /)", "", "does not name one command"},
		{NamingGemini, "read_file", "tool:harness:read_file", ""},
		{NamingGemini, "mcp_", "", "expected <server>_<tool>"},
		{NamingGemini, "Mcp_X", "", "expected mcp_"},
		{NamingOpenCode, "json-tools_query", "tool:json-tools:query", ""},
		{NamingOpenCode, "json-tools_*", "tool:json-tools:*", ""},
		{NamingOpenCode, "json-tools_?uery", "tool:json-tools:query", ""},
		{NamingOpenCode, "*_list", "tool:notes:list", ""},
		{NamingOpenCode, "far_*", "tool:far:*", ""},
		{NamingOpenCode, "far_s*", "", ""}, // a glob over unknown tools covers nothing known
		{NamingOpenCode, "other_*", "tool:other:*", ""},
		{NamingOpenCode, "a_b_x", "", "each of a, a_b"},
		{NamingOpenCode, "a_*", "tool:a:*,tool:a_b:x,tool:a_b-c:t", ""},
		{NamingOpenCode, "bash", "tool:shell:*", ""},
		{NamingOpenCode, "apply_patch", "tool:harness:apply_patch", ""},
		{NamingOpenCode, "*", "tool:*", ""},
		{NamingOpenCode, "nounderscore", "", "expected <server>_<tool>"},
	}
	for _, tt := range tests {
		t.Run(string(tt.naming)+"/"+tt.name, func(t *testing.T) {
			t.Parallel()
			caps, err := NormalizeName(tt.naming, tt.name, known)
			if tt.why != "" {
				var u *UnrecognisedError
				if !errors.As(err, &u) || !strings.Contains(u.Reason, tt.why) {
					t.Fatalf("NormalizeName(%s, %q) = %v, %v; want unrecognised: %s", tt.naming, tt.name, caps, err, tt.why)
				}
				return
			}
			if err != nil {
				t.Fatalf("NormalizeName(%s, %q): %v", tt.naming, tt.name, err)
			}
			var got []string
			for _, c := range caps {
				got = append(got, c.String())
			}
			if strings.Join(got, ",") != tt.want {
				t.Errorf("NormalizeName(%s, %q) = %s, want %s", tt.naming, tt.name, strings.Join(got, ","), tt.want)
			}
		})
	}
}

// TestToolNameRoundTrip: every name mcp-config writes reads back to the
// capability it was written for.
func TestToolNameRoundTrip(t *testing.T) {
	t.Parallel()
	known := Known{"json-tools": {"query", "edit-in-place"}, "mcpsrv_neotoma": {"store"}}
	for _, n := range []Naming{NamingClaude, NamingCodex, NamingGemini, NamingOpenCode} {
		for s, members := range known {
			for _, m := range append([]string{"*"}, members...) {
				name := ToolName(n, s, m)
				caps, err := NormalizeName(n, name, known)
				want := Tool(s, m)
				if m == "*" {
					want = Capability{Kind: KindSurface, Surface: s}
				}
				if err != nil || len(caps) != 1 || caps[0] != want {
					t.Errorf("%s: %s:%s is named %q, read back as %v, %v", n, s, m, name, caps, err)
				}
			}
		}
	}
	if got := ToolName(NamingCodex, "json-tools", "edit-in-place"); got != "mcp__json_tools__edit_in_place" {
		t.Errorf("codex name = %q", got)
	}
}

func TestGlobMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"json-tools_*", "json-tools_query", true},
		{"json-tools_*", "json-tools_", true},
		{"json-tools_*", "notes_list", false},
		{"*_list", "notes_list", true},
		{"*", "anything", true},
		{"n?tes_*", "notes_list", true},
		{"n?tes_*", "nootes_list", false},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"a*", "a/b", false},
		{"exact", "exact", true},
		{"exact", "exactly", false},
		{"", "", true},
	}
	for _, tt := range tests {
		if got := GlobMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("GlobMatch(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestGeminiMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"mcp_json-tools_query", "mcp_json-tools_query", true},
		{"mcp_json-tools_*", "mcp_json-tools_query", true},
		{"mcp_json-tools_*", "mcp_json-tools-x_query", false},
		{"mcp_*", "mcp_notes_list", true},
		{"mcp_*", "read_file", false},
		{"mcp_json-tools_query", "mcp_json-tools_keys", false},
	}
	for _, tt := range tests {
		if got := GeminiMatch(tt.pattern, tt.name); got != tt.want {
			t.Errorf("GeminiMatch(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}
