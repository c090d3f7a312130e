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
