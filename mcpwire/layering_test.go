package mcpwire

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/toolgate/toolgate"

// layering is the dependency rule of the MCP packages: the client-facing
// transports (mcpserve) and the relay (mcpproxy, its transport) share
// mcpwire and reach neither each other nor the call pipeline, which the
// gateway alone plugs in; mcpwire reaches none of them.
var layering = map[string][]string{
	"mcpwire":            {"mcpserve", "mcpproxy", "mcpproxy/transport", "callpipe"},
	"mcpserve":           {"mcpproxy", "mcpproxy/transport", "callpipe"},
	"mcpproxy":           {"mcpserve", "callpipe"},
	"mcpproxy/transport": {"mcpproxy", "mcpserve", "callpipe"},
}

// TestLayering: no package of the rule reaches, directly or through any
// package of the module, one it must not (non-test files, parsed from
// the tree, so the test needs no toolchain).
func TestLayering(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	for pkg, banned := range layering {
		path, reached := reach(t, root, pkg)
		for _, b := range banned {
			if slices.Contains(reached, b) {
				t.Errorf("%s imports %s (%s): it must not (see layering)", pkg, b, strings.Join(path[b], " -> "))
			}
		}
	}
}

// TestLayeringCatches: the walk sees a banned import, direct and
// transitive, in a tree written for the purpose.
func TestLayeringCatches(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(pkg, src string) {
		dir := filepath.Join(root, pkg)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "a.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mcpserve", "package mcpserve\nimport _ \""+module+"/jsonrpc\"\n")
	write("jsonrpc", "package jsonrpc\nimport (\n\t\"fmt\"\n\t_ \""+module+"/callpipe\"\n)\nvar _ = fmt.Sprint\n")
	write("callpipe", "package callpipe\n")
	path, reached := reach(t, root, "mcpserve")
	if !slices.Contains(reached, "callpipe") || strings.Join(path["callpipe"], " -> ") != "mcpserve -> jsonrpc -> callpipe" {
		t.Errorf("reached %v, path %v", reached, path["callpipe"])
	}
}

// reach returns the module packages pkg reaches through the imports of
// their non-test files, with the path that reaches each.
func reach(t *testing.T, root, pkg string) (map[string][]string, []string) {
	t.Helper()
	path := map[string][]string{pkg: {pkg}}
	queue := []string{pkg}
	var reached []string
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, imp := range imports(t, filepath.Join(root, filepath.FromSlash(cur))) {
			rel, ok := strings.CutPrefix(imp, module+"/")
			if !ok {
				continue
			}
			if _, seen := path[rel]; seen {
				continue
			}
			path[rel] = append(slices.Clone(path[cur]), rel)
			reached = append(reached, rel)
			queue = append(queue, rel)
		}
	}
	return path, reached
}

// imports lists the imports of the non-test Go files in dir.
func imports(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("package directory %s: %v", dir, err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, is := range f.Imports {
			p, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
		}
	}
	return out
}
