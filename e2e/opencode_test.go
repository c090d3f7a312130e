package e2e

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
	"github.com/toolgate/toolgate/e2e/scriptedmodel/chatcompletions"
	"github.com/toolgate/toolgate/grantcheck"
)

// opencodeNaming is how OpenCode names an MCP tool: <server>_<tool>.
func opencodeNaming(surface, tool string) string {
	return grantcheck.ToolName(grantcheck.NamingOpenCode, surface, tool)
}

// runOpenCode runs `opencode run` with opencode.json = a provider
// (@ai-sdk/openai-compatible, bundled with OpenCode) pointing at the
// scripted Chat Completions endpoint, merged with cfg (mcp-config's
// output). Offline: no models.dev fetch, autoupdate, default plugins, LSP
// downloads or sharing, and the registry of its background plugin install
// is a closed loopback port.
func runOpenCode(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) *chatcompletions.Server {
	t.Helper()
	cli := harnessCLI(t, "opencode", "opencode", "opencode.sh")
	model := chatcompletions.Start(chatcompletions.Options{MainTool: opencodeNaming("json-tools", "query"), FinalText: "all done", Turns: turns})
	t.Cleanup(model.Close)
	provider := `{
  "provider": {"scripted": {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
    "options": {"baseURL": "` + model.URL + `", "apiKey": "dummy"},
    "models": {"scripted-model": {"name": "Scripted", "tool_call": true}}}},
  "model": "scripted/scripted-model", "autoupdate": false, "share": "disabled"
}`
	env, home := e.cliEnv(t, "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_SHARE=1",
		"npm_config_registry=http://127.0.0.1:9/")
	// mergeJSON would lose the order of the tools map, in which the last
	// matching key wins: the provider goes in a file of its own, the
	// generated config is used exactly as printed.
	env = append(env, "OPENCODE_CONFIG="+writeFile(t, home, "opencode.json", cfg))
	writeFile(t, filepath.Join(home, ".config", "opencode"), "opencode.json", provider)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "run", "--format", "json", "-m", "scripted/scripted-model", "Use the JSON tools on data.json.")
	cmd.Dir = e.dir
	cmd.Env = env
	out := runCLI(t, label, cmd, model)
	if !strings.Contains(out, `"text":"all done"`) {
		t.Errorf("opencode did not finish:\n%s", out)
	}
	return model
}

// TestOpenCode drives the real OpenCode CLI (scripts/ci-deps/opencode.sh)
// through toolgate, configured by what `toolgate mcp-config --harness
// opencode` prints, over stdio and over HTTP to the daemon; see
// harnessEnv.check. In stdio mode a second run with keys taken out of the
// tools map shows OpenCode enforcing it.
func TestOpenCode(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newHarnessEnv(t, mode)
			cfg := e.mcpConfig(t, "opencode")
			if !strings.Contains(cfg, `"json-tools_*": false`) || !strings.Contains(cfg, `"json-tools_keys": true`) {
				t.Fatalf("mcp-config --harness opencode lacks the tools map:\n%s", cfg)
			}
			model := runOpenCode(t, e, "opencode "+mode, cfg, e.turns(opencodeNaming))
			e.check(t, model, opencodeNaming)
			if mode != "stdio" {
				return
			}
			n := newHarnessEnv(t, mode)
			narrowed := strings.ReplaceAll(strings.Replace(cfg, "\"json-tools_keys\": true,\n", "", 1), e.ws, n.ws)
			if narrowed == strings.ReplaceAll(cfg, e.ws, n.ws) {
				t.Fatalf("could not take keys out of the tools map:\n%s", cfg)
			}
			model = runOpenCode(t, n, "opencode narrowed allowlist", narrowed, n.narrowTurns(opencodeNaming))
			n.checkNarrowed(t, model, opencodeNaming, false)
		})
	}
}
