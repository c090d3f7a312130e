package workspace

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// treeDiff describes the first difference between two node trees in what
// the decoder reads (kind, style, tag, value, position, children), or ""
// when they agree. Comments are not compared: the fast path keeps none.
func treeDiff(a, b *yaml.Node, path string) string {
	switch {
	case a == nil || b == nil:
		if a != b {
			return fmt.Sprintf("%s: fast %v, yaml.v3 %v", path, a, b)
		}
		return ""
	case a.Kind != b.Kind || a.Style != b.Style || a.Tag != b.Tag || a.Value != b.Value ||
		a.Line != b.Line || a.Column != b.Column || a.Anchor != b.Anchor || !sameTarget(a.Alias, b.Alias):
		return fmt.Sprintf("%s: fast {kind %d style %d tag %s value %q at %d:%d}, yaml.v3 {kind %d style %d tag %s value %q at %d:%d anchor %q}",
			path, a.Kind, a.Style, a.Tag, a.Value, a.Line, a.Column, b.Kind, b.Style, b.Tag, b.Value, b.Line, b.Column, b.Anchor)
	case len(a.Content) != len(b.Content):
		return fmt.Sprintf("%s: fast has %d children, yaml.v3 %d", path, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if d := treeDiff(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
			return d
		}
	}
	return ""
}

// sameTarget reports whether two aliases name the same anchored node: the
// one written at the same place (nodes are compared there).
func sameTarget(a, b *yaml.Node) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Line == b.Line && a.Column == b.Column && a.Anchor == b.Anchor && a.Kind == b.Kind
}

// compareParsers fails when the fast path accepts data and yaml.v3 refuses
// it or reads it differently, or when loading through either path gives a
// different Workspace or different errors. It reports whether the fast
// path accepted data.
func compareParsers(t *testing.T, data []byte) bool {
	t.Helper()
	fast, ok := fastParse(data)
	if !ok {
		return false
	}
	precise, errs := preciseDocument("f.yaml", data)
	if errs != nil {
		t.Fatalf("the fast path accepted what yaml.v3 refuses (%v):\n%s", errs, data)
	}
	if d := treeDiff(fast, precise, "root"); d != "" {
		t.Fatalf("the parsers differ at %s\n%s", d, data)
	}
	ws1, err1 := parse("f.yaml", data, parseDocument)
	ws2, err2 := parse("f.yaml", data, preciseDocument)
	if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(ws1, ws2) {
		t.Fatalf("the loads differ:\nfast: %v\nyaml.v3: %v\n%s", err1, err2, data)
	}
	return true
}

// FuzzFastParse is the differential check of the two parse paths: on every
// input the fast path accepts, yaml.v3 must accept it too and build the
// same tree, and the loaded Workspace (or its errors) must be the same.
func FuzzFastParse(f *testing.F) {
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
	for _, src := range fastCases {
		f.Add([]byte(src.src))
	}
	f.Add(benchWorkspace(2, 2, 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		compareParsers(t, data)
	})
}

// fastCases are inputs at the edges of the subset, each with whether the
// fast path must take it. Either way compareParsers must hold.
var fastCases = []struct {
	src  string
	fast bool
}{
	{"version: 1\n", true},
	{"a: b", true}, {"a:", true}, {"- a", true}, {"a: [b]", true}, {"a: |\n  text", true}, {"a: >-\n  x\n ", true}, // no final line break
	{"a: b\nc:\n  - d\n  - e: f\n    g: [h, 'i', \"j\"]\n", true},
	{"a:\n- x\n-\n- {k: v}\nb: 2\n", true},          // an indentless list with an empty item
	{"a:\nb:\n  c:\n", true},                        // empty values
	{"a: b # c\n# d\n  # e\nf: 'g''h' # i\n", true}, // comments
	{"a: b#c\nd: e:f\n", true},                      // '#' and ':' inside plain scalars
	{"a: [k:v, x y , \"q\"]\n", true},               // flow plain scalars with ':' and spaces
	{"a: [k:v, x y , \"q\":1]\n", false},            // a one-pair mapping in a flow list
	{"a: {\"q\":1, r: s t, u: [v]}\n", true},        // a JSON-like flow key
	{"a: \"\\x41\\u00e9\\U0001F600\\n\\\"\\\\\\0\\N\\_\"\n", true},
	{"a: \"\\/\"\n", false},     // not an escape yaml.v3 knows
	{"a: \"\\ud800\"\n", false}, // a surrogate
	{"a: 0x1F\nb: 1_000\nc: .5\nd: -.inf\ne: 2025-06-18\nf: 1e3\ng: 0b11\nh: 0o17\ni: +12\nj: ~\nk: Yes\nl: <<\nm: 2001-12-14t21:59:43.10-05:00\nn: -0b1\no: 0777\np: 1.\n", true},
	{"é: ü\nx: [é, ü]\n\"ü\": {é: ü}\n", true}, // columns count characters
	{"- a\n- b\n", true},                       // a list at the top
	{"plain\n", true},                          // a scalar at the top
	{"---\na: b\n...\n", true},                 // document markers
	{"--- # doc\na: b\n... # end\n# after\n", true},
	{"--- a\n", false},                                                  // content on the marker's line
	{"a: b\n---\nc: d\n", false},                                        // two documents
	{"a: [b,\n---\n]\n", false},                                         // a marker inside a flow
	{"a: [b, # one\n  c,\n# two\n  d]\nx: {k: v,\n  l:\n   w}\n", true}, // flows over lines, with comments
	{"a: {k:\nv}\nb: [\nc]\nd: {\"k\":\n v}\ne: [f\n]\n", true},         // flows broken at odd places, even at column 0
	{"a: [b\n  c]\n", false},                                            // a plain scalar over two lines, in a flow
	{"a: b\n  c\n", false},                                              // a plain scalar over two lines
	{"a: |\n  text\n   more\n\n  last\n\n\nb: >-\n  one\n  two\n\n  three\n    indented\n  four\nc: |+\n  keep\n\nd: >\n\n  lead\ne: |-\n", true},
	{"a: | # c\n  x\n- b\n", false}, // a block scalar, then a list entry at a mapping's indentation
	{"a: |\n\n\n  x\n\n", true}, {"a: >+\n  x\n\n\n", true}, {"a: |\n  x\n   \n  y\n", true}, {"a: |\n  # text\n# comment\nb: 1\n", true},
	{"a: |2\n   x\n", false},             // an indentation indicator
	{"- |\n  x\n- >\n   y\n- z\n", true}, // block scalars in a list; a less indented line ends one
	{"a:\n  b: |\n    x\n  c: d\n", true},
	{"a: |\n    x\n  y\n", false}, {"- >\n   y\n  z\n", false}, // text below a block scalar's indentation
	{"a: &x b\nc: *x\nd: [*x, &y [e], *y]\nf: {g: *x}\n", true}, // anchors and aliases
	{"a: &m\n  k: v\nb: &s\n  - 1\nc: &i\n- 2\nd: *m\n", true},  // anchored collections on the next line
	{"- &a x\n- *a\n- &b\n  k: v\n- &c [1]\n", true},
	{"- &a k: v\n", false}, // an anchor on a key's line names the key
	{"&a k: v\n", false},
	{"a: &x\nb: 1\n", false},        // an anchored empty value
	{"a: *nope\n", false},           // an unknown anchor
	{"a: &x [*x]\n", true},          // an alias inside its own anchor
	{"a: &x 1\nb: &x [*x]\n", true}, // an anchor named again
	{"a: *x\n", false},
	{"a: !!str 1\n", false},        // tags
	{"\ta: b\n", false},            // tabs
	{"a: b\r\n", false},            // carriage returns
	{"\ufeffa: b\n", false},        // a byte order mark
	{"a: \u0085\n", false},         // NEL, a line break to yaml.v3
	{"? a\n: b\n", false},          // complex keys
	{"a: b: c\n", false},           // a mapping inline
	{"a: - b\n", false},            // a list inline
	{"a:\n  b: 1\n c: 2\n", false}, // a bad dedent
	{"a: [b, ]\n", false},          // a trailing comma
	{"a: {b}\n", false},            // a flow key without a value
	{"a: \"b\"c\n", false},         // text after a quoted scalar
	{"a: [b]: c\n", false},         // a flow collection as a key
	{"", false},                    // no document
	{"# only a comment\n", false},
	{"a: b\n- c\n", false},                       // a list entry at a mapping's indentation
	{"- a\nb: c\n", false},                       // a key at a list's indentation
	{"a:   \n  b\n", true},                       // a value on the next line
	{"a: -1\nb: --x\nc: [-y, --]\n", true},       // '-' starting plain scalars
	{strings.Repeat("k", 1001) + ": v\n", false}, // a key longer than yaml.v3 allows
	{"a: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n", false}, // deeper than the fast path goes
}

func TestFastParseCases(t *testing.T) {
	t.Parallel()
	for i, c := range fastCases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			if got := compareParsers(t, []byte(c.src)); got != c.fast {
				t.Errorf("fast path taken = %v, want %v for\n%s", got, c.fast, c.src)
			}
		})
	}
}

// TestFastParseFixtures checks that the workspaces this repository ships,
// and the benchmark's, take the fast path and load as yaml.v3 reads them.
func TestFastParseFixtures(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "valid", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	bundledPacks, err := filepath.Glob(filepath.Join("..", "bundled", "packs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, bundledPacks...)
	files = append(files, filepath.Join("..", "examples", "command-packs", "toolgate.yaml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !compareParsers(t, data) {
			t.Errorf("%s does not take the fast path", name)
		}
	}
	if !compareParsers(t, benchWorkspace(10, 10, 20)) {
		t.Errorf("the benchmark workspace does not take the fast path")
	}
}

// TestFastParseGenerated compares the parsers on documents built from the
// pieces the fast path reads, put together at random: indentation,
// compact and indentless lists, flow collections, empty values, comments
// and scalars with indicator characters inside.
func TestFastParseGenerated(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	accepted := 0
	for range n {
		if compareParsers(t, []byte(genDoc(r))) {
			accepted++
		}
	}
	// A generator the fast path always refuses would test nothing.
	t.Logf("the fast path took %d of %d documents", accepted, n)
	if accepted < n/8 {
		t.Errorf("the fast path took only %d of %d generated documents", accepted, n)
	}
}

var genScalars = []string{
	"a", "b c", "x:y", "-x", "--", "1", "0x1F", "1_0", ".5", "1e3", "2025-06-18", "~", "null", "true", "yes",
	"<<", "é", "a#b", "a #b", "a,b", "a[b]", "a{b}", "a?b", "'q'", "'it''s'", `"d"`, `"\t\u00e9"`, `""`, "''", "a  b",
	"-", ":x", "?x", "a:", "a :b", "{credential.x}", "@x", "%x", "!x", "&x", "*x", "|", ">", "'", `"`, "...", "---",
	`"a: b"`, "x ", "k: v", "#", "[", "]", "{", "}", ",",
}

// gen writes random documents from the pieces the fast path reads, and
// some it refuses.
type gen struct {
	r       *rand.Rand
	b       strings.Builder
	anchors []string
}

func genDoc(r *rand.Rand) string {
	g := &gen{r: r}
	if r.IntN(10) == 0 {
		g.b.WriteString("---\n")
	}
	g.block(0, 0)
	if r.IntN(10) == 0 {
		g.b.WriteString("...\n")
	}
	return g.b.String()
}

func (g *gen) scalar() string { return genScalars[g.r.IntN(len(genScalars))] }

// prop writes an anchor or an alias before or instead of a value now and
// then; alias reports that it wrote the whole value.
func (g *gen) prop() (text string, alias bool) {
	switch g.r.IntN(10) {
	case 0:
		name := fmt.Sprintf("a%d", g.r.IntN(4))
		g.anchors = append(g.anchors, name)
		return "&" + name + " ", false
	case 1:
		if len(g.anchors) > 0 && g.r.IntN(4) > 0 {
			return "*" + g.anchors[g.r.IntN(len(g.anchors))], true
		}
		return "*nope", true
	}
	return "", false
}

func (g *gen) block(indent, depth int) {
	r, b := g.r, &g.b
	pad := strings.Repeat(" ", indent)
	asList := r.IntN(3) == 0
	for range 1 + r.IntN(3) {
		if r.IntN(8) == 0 {
			b.WriteString(strings.Repeat(" ", r.IntN(indent+3)) + "# note\n")
		}
		if r.IntN(12) == 0 {
			b.WriteString(strings.Repeat(" ", r.IntN(3)) + "\n")
		}
		if asList {
			b.WriteString(pad + "-" + strings.Repeat(" ", r.IntN(2)))
		} else {
			b.WriteString(pad + g.scalar() + ":")
		}
		prop, alias := g.prop()
		if alias {
			b.WriteString(" " + prop + "\n")
			continue
		}
		if prop != "" {
			b.WriteString(" " + prop)
		}
		switch k := r.IntN(8); {
		case k == 0 && depth < 4: // a nested block on the next lines
			b.WriteString("\n")
			if !asList && r.IntN(3) == 0 { // an indentless list
				b.WriteString(pad + "- " + g.scalar() + "\n")
				continue
			}
			g.block(indent+r.IntN(4), depth+1)
		case k == 1 && asList && depth < 4: // a compact mapping in a list item
			b.WriteString(" " + g.scalar() + ": " + g.scalar() + "\n")
			if r.IntN(2) == 0 {
				b.WriteString(pad + strings.Repeat(" ", 1+r.IntN(2)) + g.scalar() + ": " + g.flow(indent, 0) + "\n")
			}
		case k == 2:
			b.WriteString("\n") // an empty value
		case k == 3:
			b.WriteString(" " + g.flow(indent, 0) + "\n")
		case k == 4:
			g.blockScalar(indent)
		default:
			b.WriteString(" " + g.scalar())
			if r.IntN(5) == 0 {
				b.WriteString(" # c")
			}
			b.WriteString(strings.Repeat(" ", r.IntN(2)) + "\n")
		}
	}
}

// blockScalar writes a literal or folded scalar with lines of varying
// indentation and empty lines.
func (g *gen) blockScalar(indent int) {
	r, b := g.r, &g.b
	b.WriteString(" " + []string{"|", ">", "|-", ">-", "|+", ">+", "|2", "| # c"}[r.IntN(8)] + "\n")
	base := indent + 1 + r.IntN(3)
	for range r.IntN(5) {
		switch r.IntN(5) {
		case 0:
			b.WriteString(strings.Repeat(" ", r.IntN(base+3)) + "\n")
		case 1:
			b.WriteString(strings.Repeat(" ", base+1+r.IntN(2)) + "more " + g.scalar() + "\n")
		default:
			b.WriteString(strings.Repeat(" ", base) + "text " + g.scalar() + "\n")
		}
	}
}

// flow writes a flow collection, now and then over several lines.
func (g *gen) flow(indent, depth int) string {
	r := g.r
	var parts []string
	isMap := r.IntN(2) == 0
	for range r.IntN(4) {
		prop, alias := g.prop()
		v := prop
		if !alias {
			if depth < 2 && r.IntN(4) == 0 {
				v += g.flow(indent, depth+1)
			} else {
				v += g.scalar()
			}
		}
		if isMap {
			v = g.scalar() + ": " + v
		}
		parts = append(parts, v)
	}
	sep := ", "
	if r.IntN(4) == 0 {
		sep = ",\n" + strings.Repeat(" ", indent+r.IntN(4))
		if r.IntN(3) == 0 {
			sep = ", # c" + sep
		}
	}
	if isMap {
		return "{" + strings.Join(parts, sep) + "}"
	}
	return "[" + strings.Join(parts, sep) + "]"
}
