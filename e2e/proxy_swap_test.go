package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
)

// mcpConfigServer is one entry of a Claude Code --mcp-config file.
type mcpConfigServer struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// launchFromConfig starts the "memory" entry of an --mcp-config file as
// Claude Code does (command, args, env, in the config's directory) and
// opens an MCP session on it.
func launchFromConfig(t *testing.T, dir, file string, bins map[string]string) *client.Client {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]mcpConfigServer `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	s, ok := cfg.MCPServers["memory"]
	if !ok {
		t.Fatalf("%s has no memory server", file)
	}
	cmd := s.Command
	if p, ok := bins[cmd]; ok {
		cmd = p
	}
	env := os.Environ()
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	inDir := transport.WithCommandFunc(func(ctx context.Context, command string, env, args []string) (*exec.Cmd, error) {
		c := exec.CommandContext(ctx, command, args...)
		c.Env, c.Dir = env, dir
		return c, nil
	})
	cl, err := client.NewStdioMCPClientWithOptions(cmd, env, s.Args, inDir)
	if err != nil {
		t.Fatal(err)
	}
	initClient(t, cl)
	return cl
}

// TestNeotomaSwap: the example's two Claude Code configs show the model
// the same tool names (toolgate's are the granted subset, unchanged), and
// through toolgate delete_entities is refused while create_entities works.
func TestNeotomaSwap(t *testing.T) {
	node, _ := conformanceSuite(t)
	src := filepath.Join(repoRoot(t), "examples", "neotoma-swap")
	dir := t.TempDir()
	for _, f := range []string{"toolgate.yaml", "direct.mcp.json", "toolgate.mcp.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		// The configs name the server by a path relative to the example.
		text := strings.ReplaceAll(string(b), "../../e2e/.cache", filepath.Join(repoRoot(t), "e2e", ".cache"))
		writeFile(t, dir, f, text)
	}
	t.Setenv("PATH", filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	bins := map[string]string{"toolgate": binary, "node": node}

	direct := launchFromConfig(t, dir, "direct.mcp.json", bins)
	proxied := launchFromConfig(t, dir, "toolgate.mcp.json", bins)
	harness := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			out[i] = "mcp__memory__" + n
		}
		slices.Sort(out)
		return out
	}
	directNames, proxiedNames := harness(toolNames(t, direct)), harness(toolNames(t, proxied))
	want := harness([]string{"read_graph", "search_nodes", "open_nodes", "create_entities"})
	if !slices.Equal(proxiedNames, want) {
		t.Fatalf("through toolgate the harness sees %v, want the granted %v", proxiedNames, want)
	}
	for _, n := range proxiedNames {
		if !slices.Contains(directNames, n) {
			t.Errorf("%s is not a name the direct config shows (%v)", n, directNames)
		}
	}
	if !slices.Contains(directNames, "mcp__memory__delete_entities") {
		t.Fatalf("direct config lacks delete_entities: %v", directNames)
	}

	entity := map[string]any{"entities": []any{map[string]any{"name": "toolgate", "entityType": "project", "observations": []any{"governs MCP"}}}}
	if text, isErr, _, err := call(t, proxied, "create_entities", entity); err != nil || isErr {
		t.Fatalf("create_entities through toolgate: %q %v %v", text, isErr, err)
	}
	if text, isErr, _, err := call(t, proxied, "read_graph", map[string]any{}); err != nil || isErr || !strings.Contains(text, "governs MCP") {
		t.Errorf("read_graph through toolgate: %q %v %v", text, isErr, err)
	}
	text, isErr, _, err := call(t, proxied, "delete_entities", map[string]any{"entityNames": []any{"toolgate"}})
	if err != nil || !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Errorf("delete_entities through toolgate: %q %v %v; want a DENIED refusal", text, isErr, err)
	}
	if text, _, _, _ := call(t, direct, "read_graph", map[string]any{}); !strings.Contains(text, "governs MCP") {
		t.Errorf("the refused delete reached the server: graph is now %q", text)
	}
	audit, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
	if !strings.Contains(string(audit), `"action":"mcp:call:memory:delete_entities","decision":"deny"`) {
		t.Errorf("audit lacks the refused delete:\n%s", audit)
	}
}
