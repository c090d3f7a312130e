package grantcheck

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// constraintFixture is a directory tree for path_within:
//
//	root/toolgate.yaml
//	root/data/file.txt, root/data/sub/
//	root/data/link-out -> root/outside     (escapes)
//	root/data/link-in  -> root/data/sub    (stays inside)
//	root/data/loop     -> root/data/loop   (a cycle)
//	root/data-evil/x                       (sibling with the same prefix)
//	root/outside/secret
//	root/datalink -> root/data             (a root that is itself a link)
func constraintFixture(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"data/sub", "data-evil", "outside"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"data/file.txt", "data-evil/x", "outside/secret"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"data/link-out": filepath.Join(root, "outside"),
		"data/link-in":  "sub",
		"data/loop":     filepath.Join(root, "data/loop"),
		"datalink":      filepath.Join(root, "data"),
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	yaml := fmt.Sprintf(`
version: 1
command_packs:
  - id: p
    permission: open
    commands:
      - id: op
        argv: [op, "{e}", "{c}", "{pat}", "{n}", "{s}", "{abs}", "{rel}", "{viaLink}", "{legacyN}", "{legacyMode}"]
        inputs:
          type: object
          properties: {e: {}, c: {}, pat: {}, n: {}, s: {}, abs: {}, rel: {}, viaLink: {}, legacyN: {}, legacyMode: {}}
        effects: read
      - id: incwd
        cwd: data
        argv: [op, "{path}"]
        inputs: {type: object, properties: {path: {}}}
        effects: read
agents:
  - id: a
    grants:
      - op: tool:p:op
        param_constraints:
          e: {enum: [a, b, 2]}
          c: {const: exact}
          pat: {pattern: "[a-z]+"}
          n: {minimum: 1, maximum: 10}
          s: {max_length: 3}
          abs: {path_within: %s/data}
          rel: {path_within: data}
          viaLink: {path_within: %s/datalink}
          max_legacyN: 5
          allowed_legacyMode: [r, w]
      - op: tool:p:incwd
        param_constraints:
          path: {path_within: %s/data}
`, root, root, root)
	if err := os.WriteFile(filepath.Join(root, "toolgate.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestConstraints(t *testing.T) {
	t.Parallel()
	root := constraintFixture(t)
	ws, err := workspace.Load(filepath.Join(root, "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	valid := func() map[string]any {
		return map[string]any{"e": "a", "c": "exact", "pat": "abc", "n": 5.0, "s": "abc",
			"abs": root + "/data/file.txt", "rel": "data/file.txt", "viaLink": root + "/data/file.txt",
			"legacyN": 5.0, "legacyMode": "r"}
	}
	const absent = "<absent>"
	tests := []struct {
		name   string
		param  string
		value  any
		reason string // "" means the call passes
	}{
		{"enum string", "e", "b", ""},
		{"enum number", "e", 2.0, ""},
		{"enum json.Number", "e", json.Number("2"), ""},
		{"enum miss", "e", "c", `parameter "e": "c" is not one of ["a", "b", 2]`},
		{"enum wrong type", "e", true, `parameter "e": true is not one of`},
		{"enum absent", "e", absent, `parameter "e" is bound by the grant's param_constraints but was not given`},
		{"const", "c", "exact", ""},
		{"const miss", "c", "exactly", `parameter "c": "exactly" is not the only allowed value "exact"`},
		{"const absent", "c", absent, `parameter "c" is bound`},
		{"pattern", "pat", "xyz", ""},
		{"pattern anchored end", "pat", "abc1", `parameter "pat": "abc1" does not match the pattern ^(?:[a-z]+)$`},
		{"pattern anchored start", "pat", "1abc", "does not match the pattern"},
		{"pattern newline", "pat", "abc\nabc", "does not match the pattern"},
		{"pattern wrong type", "pat", 3.0, `parameter "pat": 3 is not a string`},
		{"pattern absent", "pat", absent, `parameter "pat" is bound`},
		{"minimum edge", "n", 1.0, ""},
		{"maximum edge", "n", 10.0, ""},
		{"number json.Number", "n", json.Number("7"), ""},
		{"below minimum", "n", 0.5, `parameter "n": 0.5 is below the minimum 1`},
		{"above maximum", "n", 11.0, `parameter "n": 11 is above the maximum 10`},
		{"number wrong type", "n", "5", `parameter "n": "5" is not a number`},
		{"number NaN", "n", math.NaN(), "is not a number"},
		{"number absent", "n", absent, `parameter "n" is bound`},
		{"max_length edge", "s", "abc", ""},
		{"max_length runes", "s", "äöü", ""},
		{"max_length over", "s", "abcd", `parameter "s": 4 characters, more than the 3 allowed`},
		{"max_length wrong type", "s", []any{"a"}, `parameter "s": ["a"] is not a string`},
		{"max_length absent", "s", absent, `parameter "s" is bound`},
		{"within: the root itself", "abs", root + "/data", ""},
		{"within: not yet existing", "abs", root + "/data/new/deeper.txt", ""},
		{"within: link inside", "abs", root + "/data/link-in/x", ""},
		{"within: .. back inside", "abs", root + "/data/sub/../file.txt", ""},
		{"within: through a link then ..", "abs", root + "/data/link-out/../data/file.txt", ""},
		{"within: sibling prefix", "abs", root + "/data-evil/x", fmt.Sprintf(`parameter "abs": %q is not within %s/data`, root+"/data-evil/x", root)},
		{"within: .. escape", "abs", root + "/data/../outside/secret", "is not within"},
		{"within: .. escape from missing dir", "abs", root + "/data/missing/../../outside/secret", "is not within"},
		{"within: deep .. escape", "abs", root + "/data/sub/../../outside", "is not within"},
		{"within: symlink outside", "abs", root + "/data/link-out/secret", "is not within"},
		{"within: symlink outside, link itself", "abs", root + "/data/link-out", "is not within"},
		{"within: symlink loop", "abs", root + "/data/loop/x", "cannot be resolved: too many levels of symbolic links"},
		{"within: empty", "abs", "", `parameter "abs": "" is not a path`},
		{"within: NUL", "abs", root + "/data/a\x00b", "is not a path"},
		{"within: wrong type", "abs", 1.0, `parameter "abs": 1 is not a string`},
		{"within: absent", "abs", absent, `parameter "abs" is bound`},
		{"within: relative root and arg", "rel", "data/sub/../file.txt", ""},
		{"within: relative escape", "rel", "data/../outside/secret", `parameter "rel": "data/../outside/secret" is not within data`},
		{"within: relative sibling", "rel", "data-evil/x", "is not within data"},
		{"within: root is a link", "viaLink", root + "/datalink/file.txt", ""},
		{"within: root is a link, escape", "viaLink", root + "/outside/secret", "is not within"},
		{"within: a list, every item inside", "abs", []any{root + "/data/file.txt", root + "/data/sub"}, ""},
		{"within: a list, empty", "abs", []any{}, ""},
		{"within: a list, one item outside", "abs", []any{root + "/data/file.txt", root + "/outside/secret"}, "is not within " + root + "/data (item 1)"},
		{"within: a list, an item not a string", "abs", []any{root + "/data/file.txt", 3.0}, `parameter "abs": item 1, 3, is not a string`},
		{"within: a list, a link out", "abs", []any{root + "/data/link-out/secret"}, "(item 0)"},
		{"pattern: a list is not a string", "pat", []any{"abc"}, `is not a string`},
		{"legacy max_", "legacyN", 6.0, `parameter "legacyN": 6 is above the maximum 5`},
		{"legacy allowed_", "legacyMode", "x", `parameter "legacyMode": "x" is not one of ["r", "w"]`},
		{"legacy allowed_ absent", "legacyMode", absent, "is bound"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := valid()
			if tt.value == absent {
				delete(args, tt.param)
			} else {
				args[tt.param] = tt.value
			}
			d := p.Decide("a", "p", "op", args)
			if tt.reason == "" {
				if d.Outcome != Allow {
					t.Fatalf("%s = %v: %+v, want allow", tt.param, tt.value, d)
				}
				return
			}
			if d.Outcome != Deny || d.Stage != StageConstraints || !strings.Contains(d.Reason, tt.reason) {
				t.Fatalf("%s = %v: %+v\nwant a constraints denial containing %q", tt.param, tt.value, d, tt.reason)
			}
		})
	}
	if d := p.Decide("a", "p", "op", valid()); d.Outcome != Allow {
		t.Fatalf("the valid arguments are refused: %+v", d)
	}
}

// Relative arguments resolve against the command's cwd when it declares one.
func TestPathWithinRelativeToCwd(t *testing.T) {
	t.Parallel()
	root := constraintFixture(t)
	ws, err := workspace.Load(filepath.Join(root, "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	for path, ok := range map[string]bool{
		"file.txt":            true,
		"sub/../file.txt":     true,
		".":                   true,
		"../outside/secret":   false,
		"../data-evil/x":      false,
		"link-out/secret":     false,
		root + "/data/x":      true,
		root + "/outside/abc": false,
	} {
		d := p.Decide("a", "p", "incwd", map[string]any{"path": path})
		if (d.Outcome == Allow) != ok {
			t.Errorf("path %q: %+v, want allowed=%v", path, d, ok)
		}
	}
}

func TestResolvePath(t *testing.T) {
	t.Parallel()
	root := constraintFixture(t)
	tests := map[string]string{
		root + "/data/link-in/x":           root + "/data/sub/x",
		root + "/data/link-out/../x":       root + "/x",
		root + "/data/./sub//x/":           root + "/data/sub/x",
		root + "/nope/../data":             root + "/data",
		root + "/../../../../../../../../": "/",
	}
	for in, want := range tests {
		if got, err := ResolvePath(in); err != nil || got != want {
			t.Errorf("ResolvePath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ResolvePath("relative"); err == nil {
		t.Error("resolvePath accepted a relative path")
	}
	for _, c := range []struct {
		path, root string
		want       bool
	}{
		{"/data", "/data", true}, {"/data/x", "/data", true}, {"/data-evil", "/data", false},
		{"/dat", "/data", false}, {"/x", "/", true},
	} {
		if got := within(c.path, c.root); got != c.want {
			t.Errorf("within(%q, %q) = %v", c.path, c.root, got)
		}
	}
}

func FuzzConstraint(f *testing.F) {
	f.Add("[a-z]+", "abc", 3.5, 3, "x/../y")
	f.Add("(", "", math.Inf(1), 0, "/")
	f.Add(`\pL*`, "äöü", -1.0, 10, "../../etc/passwd")
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pattern, value string, num float64, maxLen int, path string) {
		minV, maxV := -num, num
		c := &workspace.Constraint{Param: "v", Pattern: pattern, Minimum: &minV, Maximum: &maxV,
			Enum: []any{value, num}, Const: value, HasConst: true, PathWithin: root}
		if maxLen >= 0 {
			c.MaxLength = &maxLen
		}
		k, err := compileConstraint(c, root)
		if err != nil {
			return
		}
		for _, v := range []any{value, num, nil, []any{value}, map[string]any{"a": value}, json.Number(value), path} {
			_ = k.check(map[string]any{"v": v}, root)
		}
		_ = k.check(map[string]any{}, root)
		pk := &constraint{param: "p", within: root, withinAsWritten: root, maxLen: -1}
		err = pk.check(map[string]any{"p": path}, root)
		if err == nil {
			r, rerr := ResolvePath(root + "/" + path)
			if filepath.IsAbs(path) {
				r, rerr = ResolvePath(path)
			}
			if rerr != nil || !within(r, root) {
				t.Fatalf("path %q passed path_within %s but resolves to %q (%v)", path, root, r, rerr)
			}
		}
	})
}

// TestPathRoots: the runner learns which parameters the matched grant
// binds with path_within, and to which resolved root.
func TestPathRoots(t *testing.T) {
	t.Parallel()
	root := constraintFixture(t)
	ws, err := workspace.Load(filepath.Join(root, "toolgate.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	got := p.PathRoots("a", "p", "op")
	want := map[string]string{"abs": real + "/data", "rel": real + "/data", "viaLink": real + "/data"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("PathRoots(op) = %v, want %v", got, want)
	}
	if got := p.PathRoots("a", "p", "incwd"); fmt.Sprint(got) != fmt.Sprint(map[string]string{"path": real + "/data"}) {
		t.Errorf("PathRoots(incwd) = %v", got)
	}
	for _, c := range [][3]string{{"nobody", "p", "op"}, {"a", "p", "missing"}, {"a", "nosurface", "op"}} {
		if got := p.PathRoots(c[0], c[1], c[2]); got != nil {
			t.Errorf("PathRoots%v = %v, want nil", c, got)
		}
	}
}
