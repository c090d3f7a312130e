package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to Parse. Whatever the input, Parse must
// not panic; a failure is an ErrorList whose every entry is positioned; a
// success decodes the same way twice and positions every declaration.
func FuzzLoad(f *testing.F) {
	for _, dir := range []string{"valid", "invalid"} {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.yaml"))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ws, err := Parse("fuzz.yaml", data)
		again, err2 := Parse("fuzz.yaml", data)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is %T, want a non-empty ErrorList: %v", err, err)
			}
			for _, e := range list {
				if e == nil || e.Pos.Line <= 0 || e.Pos.Col <= 0 {
					t.Fatalf("error without a position: %v", e)
				}
			}
			if ws != nil {
				t.Fatalf("Parse returned a workspace with its errors")
			}
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("second parse differs:\n%v\n---\n%v", err, err2)
			}
			return
		}
		if err2 != nil || !reflect.DeepEqual(ws, again) {
			t.Fatalf("second parse differs (err %v)", err2)
		}
		checkPositions(t, ws)
	})
}

// checkPositions fails when a declaration that later errors point at has
// no position.
func checkPositions(t *testing.T, ws *Workspace) {
	t.Helper()
	check := func(what string, p Pos) {
		if p.Line <= 0 || p.Col <= 0 || p.File == "" {
			t.Fatalf("%s has no position: %+v", what, p)
		}
	}
	for _, s := range ws.MCPServers {
		check("server "+s.ID, s.Pos)
	}
	for _, p := range ws.CommandPacks {
		check("pack "+p.ID, p.Pos)
		for _, c := range p.Commands {
			check("command "+c.ID, c.Pos)
			if len(c.ArgvPos) != len(c.Argv) {
				t.Fatalf("command %s: %d argv positions for %d elements", c.ID, len(c.ArgvPos), len(c.Argv))
			}
		}
	}
	for name, c := range ws.Credentials {
		check("credential "+name, c.Pos)
	}
	for _, a := range ws.Agents {
		check("agent "+a.ID, a.Pos)
		for _, g := range a.Grants {
			check("grant "+g.Op, g.Pos)
			for _, c := range g.ParamConstraints {
				check("constraint "+c.Param, c.Pos)
			}
		}
	}
}
