package harness

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchema loads one of testdata/schemas.
func compileSchema(t *testing.T, name string) *jsonschema.Schema {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "schemas", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.NewCompiler().Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validateJSON(s *jsonschema.Schema, data []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return s.Validate(doc)
}

// TestConfigsWithoutACLIRunMatchTheirSchemas: Cursor and VS Code have no headless
// CLI to run here, so their goldens are checked against those editors'
// config schemas (VS Code's from its source, Cursor's from its docs; see
// each schema's $comment), and so is Crush's, whose npm installer cannot
// fetch its binary here (docs/harnesses.md), against the format its
// published schema describes — and a config each would reject is
// rejected, so the check can fail.
func TestConfigsWithoutACLIRunMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	cases := []struct {
		schema, golden string
	}{
		{"vscode-mcp.schema.json", "vscode-stdio.json"},
		{"vscode-mcp.schema.json", "vscode-http.json"},
		{"cursor-mcp.schema.json", "cursor-stdio.json"},
		{"cursor-mcp.schema.json", "cursor-http.json"},
		{"crush.schema.json", "crush-stdio.json"},
		{"crush.schema.json", "crush-http.json"},
	}
	for _, tc := range cases {
		data, err := os.ReadFile(filepath.Join("testdata", "config", tc.golden))
		if err != nil {
			t.Fatal(err)
		}
		if err := validateJSON(compileSchema(t, tc.schema), data); err != nil {
			t.Errorf("%s does not match %s: %v", tc.golden, tc.schema, err)
		}
	}
	bad := []struct {
		schema, doc, why string
	}{
		{"vscode-mcp.schema.json", `{"mcpServers": {}}`, "VS Code reads servers, not mcpServers"},
		{"vscode-mcp.schema.json", `{"servers": {"a": {"type": "http", "url": "ftp://x"}}}`, "url must be http(s)"},
		{"vscode-mcp.schema.json", `{"servers": {"a": {"type": "stdio", "command": "x", "includeTools": []}}}`, "unknown field"},
		{"cursor-mcp.schema.json", `{"mcpServers": {"a": {"command": "x", "url": "http://y"}}}`, "both command and url"},
		{"cursor-mcp.schema.json", `{"servers": {}}`, "Cursor reads mcpServers"},
		{"crush.schema.json", `{"mcpServers": {}}`, "Crush reads mcp, not mcpServers"},
		{"crush.schema.json", `{"mcp": {"a": {"command": "x"}}}`, "type is required"},
		{"crush.schema.json", `{"mcp": {"a": {"type": "local", "command": "x"}}}`, "type is stdio, sse or http"},
		{"crush.schema.json", `{"mcp": {"a": {"type": "stdio", "command": "x", "includeTools": []}}}`, "Crush's allowlist is enabled_tools"},
		{"crush.schema.json", `{"permissions": {"allowedTools": []}}`, "allowed_tools is snake_case"},
	}
	for _, b := range bad {
		if err := validateJSON(compileSchema(t, b.schema), []byte(b.doc)); err == nil {
			t.Errorf("%s accepted %s (%s)", b.schema, b.doc, b.why)
		}
	}
}
