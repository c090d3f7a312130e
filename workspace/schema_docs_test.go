package workspace

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// schemaPaths lists every key the schema names, as a reader writes it:
// gateway.audit.fsync, mcp_servers[].effects.<name>, with [] for a list
// item and <name> for a key of the operator's choosing.
func schemaPaths(t *testing.T) []string {
	t.Helper()
	b, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	defs, _ := root["$defs"].(map[string]any)
	seen := map[string]bool{}
	var walk func(path string, s map[string]any, depth int)
	walk = func(path string, s map[string]any, depth int) {
		if depth > 30 {
			t.Fatalf("%s: the schema nests deeper than any workspace", path)
		}
		if ref, ok := s["$ref"].(string); ok {
			walk(path, defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any), depth+1)
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			list, _ := s[k].([]any)
			for _, sub := range list {
				walk(path, sub.(map[string]any), depth+1)
			}
		}
		if items, ok := s["items"].(map[string]any); ok {
			walk(path+"[]", items, depth+1)
		}
		join := func(k string) string {
			if path == "" {
				return k
			}
			return path + "." + k
		}
		props, _ := s["properties"].(map[string]any)
		for k, p := range props {
			seen[join(k)] = true
			walk(join(k), p.(map[string]any), depth+1)
		}
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			walk(join("<name>"), ap, depth+1)
		}
	}
	walk("", root, 0)
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// TestDocsNameEverySchemaPath: docs/workspace.md documents every key of
// toolgate.yaml the schema names, each written as `path`.
func TestDocsNameEverySchemaPath(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/workspace.md")
	if err != nil {
		t.Fatal(err)
	}
	paths := schemaPaths(t)
	if len(paths) < 100 {
		t.Fatalf("only %d schema paths; the walk is broken", len(paths))
	}
	for _, p := range paths {
		if !strings.Contains(string(doc), "`"+p+"`") {
			t.Errorf("docs/workspace.md does not document `%s`", p)
		}
	}
}
