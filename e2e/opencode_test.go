package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
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
func runOpenCode(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel {
	t.Helper()
	cli := harnessCLI(t, "opencode", "opencode", "opencode.sh")
	model := startChat(t, opencodeNaming, turns)
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
	runHeadless(t, e, label, model, env, `"text":"all done"`, cli, "run", "--format", "json", "-m", "scripted/scripted-model", "Use the JSON tools on data.json.")
	return model
}

// TestOpenCode drives the real OpenCode CLI (scripts/ci-deps/opencode.sh)
// through toolgate, configured by what `toolgate mcp-config --harness
// opencode` prints, over stdio and over HTTP to the daemon; see
// harnessEnv.check. In stdio mode a second run with keys taken out of the
// tools map shows OpenCode enforcing it.
func TestOpenCode(t *testing.T) {
	harnessCase{name: "opencode", naming: opencodeNaming, run: runOpenCode,
		wantInConfig: []string{`"json-tools_*": false`, `"json-tools_keys": true`},
		narrow:       func(cfg string) string { return strings.Replace(cfg, "\"json-tools_keys\": true,\n", "", 1) }}.test(t)
}
