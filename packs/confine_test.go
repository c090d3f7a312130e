package packs

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestCheckJQ: the words that read files are refused as code wherever jq
// would read them as such; the same letters as data, fields, variables,
// formats and object keys pass.
func TestCheckJQ(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prog    string
		refused bool
	}{
		{`import "../outside/secret" as $s; $s`, true},
		{`import"../x"as$s;$s`, true},
		{"  \n\timport \"x\" as $s; $s", true},
		{`include "lib" {search: "/tmp"}; f`, true},
		{`import "secret" as $s {search: "/home/u/.docker"}; $s`, true},
		{`"lib" | modulemeta`, true},
		{`"\(import "x" as $s; $s)"`, true},
		{`"a\"b" | import`, true},
		{"# a comment\nimport \"x\" as $s; .", true},
		{`{a: 1} | include`, true},
		{`{import}`, true},
		{`. import "x" as $s; .`, true},
		{`"unterminated`, true},
		{`"\(1 + (2)`, true},
		// Allowed: the same letters, not as code.
		{`.import`, false},
		{`.a.include`, false},
		{`{import: 1, include: 2, modulemeta: 3}`, false},
		{`{import : 1}`, false},
		{"{import # key\n: 1}", false},
		{`."import"`, false},
		{`"import \"x\" as $s"`, false},
		{`"\(.import) \("include")"`, false},
		{`# import "x" as $s;` + "\n.", false},
		{`1 as $import | 2`, false},
		{`@base64 "x\(.a)"`, false},
		{`importance | include_me | modulemeta2`, false},
		{`mod::import`, false},
		{`.items[] | select(.name | test("import"))`, false},
		{`input_filename, $__loc__, env, $ENV`, false},
	}
	for _, tt := range tests {
		err := checkJQ(tt.prog)
		if (err != nil) != tt.refused {
			t.Errorf("checkJQ(%q) = %v, refused want %v", tt.prog, err, tt.refused)
		}
	}
}

// TestConfinedProgram: program text is confined for jq, and a command
// naming program parameters for an interpreter toolgate cannot confine is
// refused rather than run unconfined.
func TestConfinedProgram(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	jq := command("q", "jq", "{filter}", "{file}")
	jq.Program = []string{"filter"}
	py := command("p", "python3", "-c", "{code}")
	py.Program = []string{"code"}
	pack := packOf(jq, py)
	if _, err := r.Prepare(pack, py, map[string]any{"code": "print(1)"}); err == nil || !strings.Contains(err.Error(), `program text for "python3"`) {
		t.Errorf("python3 program: %v", err)
	}
	_, err := r.Prepare(pack, jq, map[string]any{"filter": `import "x" as $x; $x`, "file": "/d.json"})
	if ae := (*ArgError)(nil); err == nil || !strings.Contains(err.Error(), `parameter "filter": uses "import"`) {
		t.Errorf("import: %v %v", err, ae)
	}
	inv, err := r.Prepare(pack, jq, map[string]any{"filter": ".a", "file": "/d.json"})
	if err != nil || !inv.Confined || !inv.EmptyDir {
		t.Errorf("absolute file: %+v %v", inv, err)
	}
	inv, err = r.Prepare(pack, jq, map[string]any{"filter": ".a", "file": "d.json"})
	if err != nil || !inv.Confined || inv.EmptyDir {
		t.Errorf("relative file needs the declared directory: %+v %v", inv, err)
	}
	plain := command("k", "jq", "keys", "{file}")
	if inv, err := r.Prepare(packOf(plain), plain, map[string]any{"file": "d.json"}); err != nil || inv.Confined {
		t.Errorf("no program text: %+v %v", inv, err)
	}
	_ = workspace.Command{}
}

// FuzzCheckJQ: the scanner never panics, and text that does not contain
// the refused words at all is never refused for using them.
func FuzzCheckJQ(f *testing.F) {
	for _, s := range []string{`import "x" as $s; .`, `"\(include)"`, `.a # c`, `{import: 1}`, `"\(`, `"\\"`, "#\nmodulemeta"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, prog string) {
		err := checkJQ(prog)
		if err == nil || strings.Contains(err.Error(), "unterminated") {
			return
		}
		low := prog
		if !strings.Contains(low, "import") && !strings.Contains(low, "include") && !strings.Contains(low, "modulemeta") {
			t.Fatalf("%q refused without a refused word: %v", prog, err)
		}
	})
}
