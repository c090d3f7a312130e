package workspace

import (
	"errors"
	"fmt"
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
			if err2 == nil || err2.Error() != err.Error() || !reflect.DeepEqual(ws, again) {
				t.Fatalf("second parse differs:\n%v\n---\n%v", err, err2)
			}
			if ws != nil { // what could be decoded, for the later checks
				checkPositions(t, ws)
			}
			return
		}
		if err2 != nil || !reflect.DeepEqual(ws, again) {
			t.Fatalf("second parse differs (err %v)", err2)
		}
		checkPositions(t, ws)
		if d := damageOf(ws); len(d) > 0 {
			t.Fatalf("a clean load marks damage: %v", d)
		}
	})
}

// damageOf lists the declarations a load marked as holding errors, and the
// names it marked unread, in file order.
func damageOf(ws *Workspace) []string {
	var out []string
	mark := func(damaged bool, what string, p Pos) {
		if damaged {
			out = append(out, fmt.Sprintf("%d:%d %s", p.Line, p.Col, what))
		}
	}
	if ws.Unread.Surfaces {
		out = append(out, "unread surfaces")
	}
	if ws.Unread.Agents {
		out = append(out, "unread agents")
	}
	for _, r := range ws.Gateway.Approvals.Rules {
		mark(r.Damaged, "rule", r.Pos)
	}
	for _, s := range ws.MCPServers {
		mark(s.Damaged, "server "+s.ID, s.Pos)
	}
	for _, p := range ws.CommandPacks {
		mark(p.Damaged, "pack "+p.ID, p.Pos)
		mark(p.UnreadCommands, "pack "+p.ID+" unread commands", p.Pos)
		for _, r := range p.Requires {
			mark(r.Damaged, "requires "+r.Binary, r.Pos)
		}
		for _, c := range p.Commands {
			mark(c.Damaged, "command "+p.ID+":"+c.ID, c.Pos)
		}
	}
	for _, a := range ws.Agents {
		mark(a.Damaged, "agent "+a.ID, a.Pos)
		for _, g := range a.Grants {
			mark(g.Damaged, "grant "+g.Op, g.Pos)
		}
	}
	return out
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
