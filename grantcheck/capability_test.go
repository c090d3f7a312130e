package grantcheck

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    Capability
		print   string
		wantErr string
	}{
		{in: "tool:mcpsrv_neotoma:store", want: Tool("mcpsrv_neotoma", "store"), print: "tool:mcpsrv_neotoma:store"},
		{in: "tool:json-tools:edit-in-place", want: Tool("json-tools", "edit-in-place"), print: "tool:json-tools:edit-in-place"},
		{in: "tool:a.b:c.d", want: Tool("a.b", "c.d"), print: "tool:a.b:c.d"},
		{in: "tool:memory:*", want: Capability{Kind: KindSurface, Surface: "memory"}, print: "tool:memory:*"},
		{in: "pack:json-tools", want: Capability{Kind: KindPack, Surface: "json-tools"}, print: "pack:json-tools"},
		{in: "server:memory", want: Capability{Kind: KindServer, Surface: "memory"}, print: "server:memory"},
		{in: "json-tools-edit-in-place", want: Capability{Kind: KindAlias, Alias: "json-tools-edit-in-place"}, print: "json-tools-edit-in-place"},
		{in: "tool:*", want: Capability{Kind: KindAll}, print: "tool:*"},
		{in: "*", want: Capability{Kind: KindAll}, print: "tool:*"},
		{in: "", wantErr: "empty capability"},
		{in: "tool:memory", wantErr: "has no member"},
		{in: "tool::x", wantErr: "surface is empty"},
		{in: "tool:*:x", wantErr: "wildcard surface"},
		{in: "tool:memory:", wantErr: "member is empty"},
		{in: "tool:memory:st*re", wantErr: `member "st*re" may only use`},
		{in: "tool:mem ory:x", wantErr: `surface "mem ory" may only use`},
		{in: "tool:a:b:c", wantErr: `member "b:c"`},
		{in: "pack:", wantErr: "pack id is empty"},
		{in: "pack:*", wantErr: "wildcard pack id"},
		{in: "server:a/b", wantErr: `server id "a/b"`},
		{in: "bash:git", wantErr: "not recognised"},
		{in: "memory", wantErr: "not recognised"},
		{in: "-memory", wantErr: "not recognised"},
		{in: "mcp__memory__read", wantErr: "not recognised"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if got.String() != tt.print {
				t.Errorf("String() = %q, want %q", got.String(), tt.print)
			}
			again, err := Parse(got.String())
			if err != nil || again != got {
				t.Errorf("Parse(String()) = %+v, %v; want %+v", again, err, got)
			}
		})
	}
}

func FuzzParseCapability(f *testing.F) {
	for _, s := range []string{"tool:a:b", "tool:a:*", "pack:p", "server:s", "p-c", "tool:*", "*", "", "tool:", "tool:a:b:c", "a--b", "tool:-:-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(s)
		if err != nil {
			return
		}
		printed := c.String()
		again, err := Parse(printed)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its print %q does not parse: %v", s, printed, err)
		}
		if again != c {
			t.Fatalf("Parse(%q) = %+v, Parse(%q) = %+v", s, c, printed, again)
		}
		if again.String() != printed {
			t.Fatalf("print not stable: %q then %q", printed, again.String())
		}
	})
}
