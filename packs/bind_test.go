//go:build linux

package packs

import (
	"context"
	"os"
	"strings"
	"testing"
)

// TestPrepareRefusesMisplacedBound: a path_within-bound placeholder that is
// not a whole argv element, or last after literal text, is refused before
// anything runs, whoever built the command — here code, which the loader
// never saw. Without the refusal, cat gets /dev/fd/3/../outside/secret.txt
// and prints the file outside the root.
func TestPrepareRefusesMisplacedBound(t *testing.T) {
	t.Parallel()
	root, _ := beneathFixture(t)
	r := newTestRunner(t, nil)
	r.BaseDir = root
	roots := map[string]string{"dir": root}
	args := map[string]any{"dir": ".", "name": "../outside/secret.txt"}
	refused := []struct {
		argv    []string
		writeTo string
		want    string
	}{
		{argv: []string{"cat", "{dir}/{name}"}, want: `argv element 1 "{dir}/{name}": {dir} is bound by path_within`},
		{argv: []string{"cat", "{dir}/../outside/secret.txt"}, want: `the text after it ("/../outside/secret.txt")`},
		{argv: []string{"cat", "--", "{name}{dir}"}, want: `the placeholder {name} before it`},
		{argv: []string{"cat", "x{dir}y"}, want: `argv element 1 "x{dir}y"`},
		{argv: []string{"cat", "{{dir}}"}, want: `argv element 1 "{{dir}}"`},
		{argv: []string{"cat", "{dir}", "{dir}/{name}"}, want: `argv element 2`},
		{argv: []string{"cat"}, writeTo: "{dir}/{name}", want: `output.write_to "{dir}/{name}"`},
	}
	for _, tc := range refused {
		c := command("c", tc.argv...)
		c.Output.WriteTo = tc.writeTo
		if tc.writeTo != "" {
			c.Inputs["properties"].(map[string]any)["name"] = map[string]any{"type": "string"}
		}
		inv, err := r.PrepareBound(packOf(c), c, args, roots)
		if err == nil {
			res, runErr := r.Run(context.Background(), inv)
			t.Errorf("%q: prepared and ran (%v): %q", tc.argv, runErr, res.Stdout)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bind the whole path as one parameter") {
			t.Errorf("%q: %v\n  want it to contain %q and how to fix it", tc.argv, err, tc.want)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("%q: the refusal holds the outside file's content", tc.argv)
		}
	}
	// Where a bound placeholder may stand: alone, or last after literal
	// text; an unbound parameter may be composed as before.
	for _, argv := range [][]string{{"cat", "{dir}"}, {"cat", "--input={dir}"}, {"ls", "--", "{dir}"}} {
		c := command("c", argv...)
		if _, err := r.PrepareBound(packOf(c), c, map[string]any{"dir": "file.txt"}, roots); err != nil {
			t.Errorf("%q: %v", argv, err)
		}
	}
	c := command("c", "cat", "{dir}/{name}")
	if _, err := r.PrepareBound(packOf(c), c, map[string]any{"dir": root, "name": "file.txt"}, nil); err != nil {
		t.Errorf("unbound {dir}/{name}: %v", err)
	}
}

// BenchmarkPrepareBound is the per-call cost of binding one path_within
// argument at Prepare: the layout check, the walk beneath the root and the
// open that proves the file can be bound before the call is decided on.
func BenchmarkPrepareBound(b *testing.B) {
	root, _ := beneathFixture(b)
	r := NewRunner(nil, func(string) string { return "" })
	r.Contain = testContain
	r.BaseDir = root
	c := command("c", "cat", "--input={file}")
	pack := packOf(c)
	args := map[string]any{"file": "sub/deep.txt"}
	roots := map[string]string{"file": root}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.PrepareBound(pack, c, args, roots); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWriteToNewFileBeneath: a path_within-bound parameter that stands only
// in output.write_to names a destination that need not exist: the gateway
// creates it beneath the root when the command succeeds, through the
// directory it opened there. Its directory must exist inside the root; a
// name leading outside, or through a link out, is refused before anything
// runs, and nothing is written outside.
func TestWriteToNewFileBeneath(t *testing.T) {
	t.Parallel()
	root, outside := beneathFixture(t)
	r := newTestRunner(t, nil)
	r.BaseDir = root
	c := command("sort", "sort", "{in}")
	c.Inputs["properties"].(map[string]any)["out"] = map[string]any{"type": "string"}
	c.Output.WriteTo = "{out}"
	roots := map[string]string{"in": root, "out": root}
	inv, err := r.PrepareBound(packOf(c), c, map[string]any{"in": "file.txt", "out": "sub/sorted.txt"}, roots)
	if err != nil {
		t.Fatalf("a new destination beneath the root: %v", err)
	}
	res, err := r.Run(context.Background(), inv)
	if err != nil || !res.OK() {
		t.Fatalf("run: %v %+v", err, res)
	}
	if got, err := os.ReadFile(root + "/sub/sorted.txt"); err != nil || string(got) != "inside\n" {
		t.Errorf("created file: %q %v", got, err)
	}
	for _, out := range []string{"missing-dir/sorted.txt", "link-out/new.txt", "../outside/new.txt"} {
		inv, err := r.PrepareBound(packOf(c), c, map[string]any{"in": "file.txt", "out": out}, roots)
		if err == nil {
			_, err = r.Run(context.Background(), inv)
		}
		if err == nil {
			t.Errorf("write_to %s: written", out)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Errorf("outside the root now holds %d entries, want only secret.txt", len(entries))
	}
}
