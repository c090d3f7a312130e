package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// toolgateSchema compiles what the built binary's `toolgate schema`
// prints, with the validator editors' schemas are checked with here.
func toolgateSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	r := toolgate(t, t.TempDir(), nil, "schema")
	if r.code != 0 {
		t.Fatalf("toolgate schema: exit %d\n%s", r.code, r.stderr)
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatalf("toolgate schema printed no JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("toolgate:///schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("toolgate:///schema.json")
	if err != nil {
		t.Fatalf("toolgate schema does not compile: %v", err)
	}
	return s
}

// validateWorkspaceText validates a workspace's YAML against s, read into
// the JSON data model as an editor's YAML language server reads it.
func validateWorkspaceText(t *testing.T, s *jsonschema.Schema, data []byte) error {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(v)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(inst)
}

// validateAgainstToolgateSchema fails the test when the file at wsPath
// does not validate against `toolgate schema`.
func validateAgainstToolgateSchema(t *testing.T, wsPath string) {
	t.Helper()
	data, err := os.ReadFile(wsPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := validateWorkspaceText(t, toolgateSchema(t), data); err != nil {
		t.Errorf("%s does not validate against toolgate schema: %v", wsPath, err)
	}
}

// TestSchemaForEditors: the schema the binary prints accepts the example
// workspaces as they are and refuses a misspelt key, a wrong type and an
// unknown tier, as `toolgate check` does.
func TestSchemaForEditors(t *testing.T) {
	s := toolgateSchema(t)
	for _, ex := range []string{"command-packs", "neotoma-swap"} {
		data, err := os.ReadFile(filepath.Join(repoRoot(t), "examples", ex, "toolgate.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := validateWorkspaceText(t, s, data); err != nil {
			t.Errorf("examples/%s/toolgate.yaml: %v", ex, err)
		}
	}
	dir := t.TempDir()
	for name, doc := range map[string]string{
		"misspelt key": "version: 1\nagents:\n  - id: a\n    grant: [pack:x]\n",
		"wrong type":   "version: 1\ngateway:\n  metrics: {open: sometimes}\n",
		"bad tier":     "version: 1\nmcp_servers:\n  - id: s\n    command: [srv]\n    permission: relaxed\n",
	} {
		if err := validateWorkspaceText(t, s, []byte(doc)); err == nil {
			t.Errorf("%s: the schema accepts it", name)
		}
		writeFile(t, dir, "toolgate.yaml", doc)
		if r := toolgate(t, dir, nil, "check", "--offline"); r.code != 1 || !strings.Contains(r.stderr+r.stdout, "toolgate.yaml:") {
			t.Errorf("%s: check exits %d, want 1 with the error's position:\n%s%s", name, r.code, r.stdout, r.stderr)
		}
	}
}

// writtenEffects reads the effects a written workspace declares for server.
func writtenEffects(t *testing.T, wsPath string) (effects map[string]string, grants []string, text string) {
	t.Helper()
	b, err := os.ReadFile(wsPath)
	if err != nil {
		t.Fatal(err)
	}
	var ws struct {
		MCPServers []struct {
			Effects map[string]string `yaml:"effects"`
		} `yaml:"mcp_servers"`
		Agents []struct {
			Grants []string `yaml:"grants"`
		} `yaml:"agents"`
	}
	if err := yaml.Unmarshal(b, &ws); err != nil || len(ws.MCPServers) != 1 || len(ws.Agents) != 1 {
		t.Fatalf("the written workspace: %v\n%s", err, b)
	}
	return ws.MCPServers[0].Effects, ws.Agents[0].Grants, string(b)
}

// TestInitServerMemory: `toolgate init` against the real server-memory
// (stdio, Node 22) writes a workspace whose effects are the server's own
// annotations (readOnlyHint: true is read, anything else write), whose
// agent holds the reads alone, and which `check` passes and the schema
// accepts as written. Served as written, the agent's read runs and a write
// is refused; once the operator grants the write after review, the write
// is held for an approval and does not reach the server.
func TestInitServerMemory(t *testing.T) {
	node, _ := conformanceSuite(t)
	server := filepath.Join(repoRoot(t), "e2e", ".cache", "conformance", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "index.js")
	dir := t.TempDir()
	memFile := filepath.Join(dir, "memory.jsonl")

	// What the server itself says, straight from it.
	direct, err := client.NewStdioMCPClient(node, append(os.Environ(), "MEMORY_FILE_PATH="+memFile), server)
	if err != nil {
		t.Fatal(err)
	}
	initClient(t, direct)
	list, err := direct.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	var wantReads []string
	for _, tool := range list.Tools {
		want[tool.Name] = "write"
		if h := tool.Annotations.ReadOnlyHint; h != nil && *h {
			want[tool.Name] = "read"
			wantReads = append(wantReads, "tool:memory:"+tool.Name)
		}
	}
	if len(wantReads) == 0 || len(wantReads) == len(want) {
		t.Fatalf("server-memory lists %d tools of which %d are read-only; the test needs both kinds", len(want), len(wantReads))
	}

	r := toolgate(t, dir, nil, "init", "--server", "memory", "--env", "MEMORY_FILE_PATH="+memFile, "--", node, server)
	if r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	wsPath := filepath.Join(dir, "toolgate.yaml")
	effects, grants, text := writtenEffects(t, wsPath)
	if len(effects) != len(want) {
		t.Errorf("effects %v, want %v", effects, want)
	}
	for tool, e := range want {
		if effects[tool] != e {
			t.Errorf("effect of %s is %q, want %q (its annotations)", tool, effects[tool], e)
		}
		why := "readOnlyHint is false"
		if e == "read" {
			why = "readOnlyHint is true"
		}
		if !strings.Contains(text, "      "+tool+": "+e+" # review: annotations.") || !strings.Contains(text, tool+": "+e+" # review: annotations."+why) {
			t.Errorf("effect of %s lacks its review comment naming %s:\n%s", tool, why, text)
		}
	}
	if strings.Join(grants, ",") != strings.Join(sortedCopy(wantReads), ",") {
		t.Errorf("grants %v, want the reads %v", grants, wantReads)
	}
	if _, err := os.Stat(filepath.Join(dir, "toolgate.lock")); err != nil {
		t.Errorf("no lock: %v", err)
	}
	if r := toolgate(t, dir, nil, "check"); r.code != 0 || !strings.Contains(r.stdout, "every tool checked matches its pin") {
		t.Fatalf("check of the written workspace: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validateAgainstToolgateSchema(t, wsPath)

	served := mcpStdio(t, nil, "serve", "-w", wsPath, "--agent", "agent", "--stdio", "--surface", "memory")
	if text, isErr, _, err := call(t, served, "read_graph", map[string]any{}); err != nil || isErr {
		t.Fatalf("read_graph through the written workspace: %q %v %v", text, isErr, err)
	}
	entity := map[string]any{"entities": []any{map[string]any{"name": "toolgate", "entityType": "project", "observations": []any{"held"}}}}
	if text, isErr, _, err := call(t, served, "create_entities", entity); err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Errorf("create_entities, not granted: %q %v %v; want a DENIED refusal", text, isErr, err)
	}

	// The operator reviews create_entities and grants it, as the file's
	// own comment shows, with a short approval wait for the test.
	edited := strings.Replace(text, "    #   - tool:memory:create_entities\n", "", 1)
	edited = strings.Replace(edited, "    grants:\n", "    grants:\n      - tool:memory:create_entities\n", 1)
	edited += "gateway:\n  approvals: {wait: 1s}\n"
	if edited == text+"gateway:\n  approvals: {wait: 1s}\n" {
		t.Fatalf("the workspace has no commented write grant to take up:\n%s", text)
	}
	writeFile(t, dir, "toolgate.yaml", edited)
	held := mcpStdio(t, nil, "serve", "-w", wsPath, "--agent", "agent", "--stdio", "--surface", "memory")
	if text, isErr, _, err := call(t, held, "create_entities", entity); err != nil || !isErr || !strings.HasPrefix(text, "DENIED: approval pending") {
		t.Errorf("create_entities, granted on a cautious server: %q %v %v; want it held for approval", text, isErr, err)
	}
	if text, _, _, _ := call(t, direct, "read_graph", map[string]any{}); strings.Contains(text, "held") {
		t.Errorf("the held write reached the server: %s", text)
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// TestInitHTTPServer: init against the conformance server over streamable
// HTTP writes a url entry with echo (its one readOnlyHint tool) proposed
// read; check passes, and served as written the agent's echo runs while
// delete_all is refused.
func TestInitHTTPServer(t *testing.T) {
	url := startConfHTTP(t)
	dir := t.TempDir()
	r := toolgate(t, dir, nil, "init", "--server", "conf", "--url", url, "--agent", "reader")
	if r.code != 0 {
		t.Fatalf("init: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	wsPath := filepath.Join(dir, "toolgate.yaml")
	effects, grants, text := writtenEffects(t, wsPath)
	if effects["echo"] != "read" || effects["delete_all"] != "write" || strings.Join(grants, ",") != "tool:conf:echo" {
		t.Errorf("effects %v, grants %v", effects, grants)
	}
	if !strings.Contains(text, "    url: "+url+"\n") {
		t.Errorf("no url entry:\n%s", text)
	}
	if r := toolgate(t, dir, nil, "check"); r.code != 0 {
		t.Fatalf("check: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	validateAgainstToolgateSchema(t, wsPath)
	served := mcpStdio(t, nil, "serve", "-w", wsPath, "--agent", "reader", "--stdio", "--surface", "conf")
	if text, isErr, _, err := call(t, served, "echo", map[string]any{"text": "hi"}); err != nil || isErr || text != "hi" {
		t.Errorf("echo: %q %v %v", text, isErr, err)
	}
	if text, isErr, _, err := call(t, served, "delete_all", map[string]any{}); err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Errorf("delete_all: %q %v %v; want DENIED", text, isErr, err)
	}
	if r := toolgate(t, dir, nil, "init", "--server", "conf", "--url", url); r.code != 1 || !strings.Contains(r.stderr, "already exists; pass --force") {
		t.Errorf("second init: exit %d\n%s", r.code, r.stderr)
	}
}
