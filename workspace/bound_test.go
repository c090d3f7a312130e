package workspace

import (
	"strings"
	"testing"
)

// TestMisplacedBounds: a bound placeholder may be a whole element or stand
// last after literal text; every other layout is reported, with the
// element, its index and position, and how to fix it.
func TestMisplacedBounds(t *testing.T) {
	t.Parallel()
	bound := func(p string) bool { return p == "dir" || p == "path" }
	tests := []struct {
		argv    []string
		writeTo string
		want    []string // one part of each message, in order; none for a good layout
	}{
		{argv: []string{"cat", "{dir}"}},
		{argv: []string{"cat", "--file={path}"}},
		{argv: []string{"cat", "{dir}", "--x={path}"}},
		{argv: []string{"cat", "{name}/{other}"}},
		{argv: []string{"cat"}, writeTo: "{path}"},
		{argv: []string{"cat"}, writeTo: "out/{path}"},
		{argv: []string{"cat", "{dir}/{name}"}, want: []string{`argv element 1 "{dir}/{name}": {dir} is bound by path_within`}},
		{argv: []string{"cat", "{dir}/../x"}, want: []string{`the text after it ("/../x") would be resolved from that descriptor`}},
		{argv: []string{"cat", "{name}{dir}"}, want: []string{`the placeholder {name} before it`}},
		{argv: []string{"cat", "--a={name}/{path}"}, want: []string{`the placeholder {name} before it`}},
		{argv: []string{"cat", "{dir}{path}"}, want: []string{`{dir} is bound`}},
		{argv: []string{"cat", "{{path}}"}, want: []string{`argv element 1 "{{path}}"`}},
		{argv: []string{"cat", "{dir}.bak", "ok", "{path}/x"}, want: []string{`argv element 1`, `argv element 3`}},
		{argv: []string{"cat"}, writeTo: "{dir}/{name}", want: []string{`output.write_to "{dir}/{name}": {dir} is bound by path_within, a file the gateway opens itself beneath a root; the text after it ("/{name}") would name a file other than the one checked`}},
	}
	for _, tt := range tests {
		c := &Command{Argv: tt.argv, Output: Output{WriteTo: tt.writeTo, Pos: Pos{File: "w.yaml", Line: 9, Col: 9}}, Pos: Pos{File: "w.yaml", Line: 1, Col: 1}}
		for i := range tt.argv {
			c.ArgvPos = append(c.ArgvPos, Pos{File: "w.yaml", Line: 2, Col: 10 + i})
		}
		got := MisplacedBounds(c, "bound by path_within", bound)
		if len(got) != len(tt.want) {
			t.Errorf("%q %q: %d faults %v, want %d", tt.argv, tt.writeTo, len(got), got, len(tt.want))
			continue
		}
		for i, w := range tt.want {
			m := got[i]
			if !strings.Contains(m.Error(), w) || !strings.Contains(m.Error(), "bind the whole path as one parameter") {
				t.Errorf("%q: %q\n  lacks %q", tt.argv, m.Error(), w)
			}
			wantPos := Pos{File: "w.yaml", Line: 2, Col: 10 + m.Index}
			if m.Index < 0 {
				wantPos = c.Output.Pos
			}
			if m.Pos != wantPos {
				t.Errorf("%q: fault at %v, want %v", tt.argv, m.Pos, wantPos)
			}
		}
	}
}
