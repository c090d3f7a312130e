package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
	"github.com/toolgate/toolgate/e2e/scriptedmodel/responses"
	"github.com/toolgate/toolgate/grantcheck"
)

// codexNaming is how Codex shows an MCP tool to its model: the namespace
// mcp__<server> and the tool, '-' becoming '_' (the scripted Responses
// endpoint splits the flattened name back into the two).
func codexNaming(surface, tool string) string {
	return grantcheck.ToolName(grantcheck.NamingCodex, surface, tool)
}

// runCodex runs `codex exec` with config.toml = a model provider pointing
// at the scripted Responses endpoint, then cfg (mcp-config's output). It
// is offline: the provider is loopback; update checks, analytics and the
// plugin sync are off.
func runCodex(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel {
	t.Helper()
	codex := harnessCLI(t, "codex", "codex", "codex.sh")
	model := responses.Start(responses.Options{MainTool: codexNaming("json-tools", "query"), FinalText: "all done", Turns: turns})
	t.Cleanup(model.Close)
	home := filepath.Join(t.TempDir(), "codex")
	header := `model = "gpt-5.1-codex"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[model_providers.scripted]
name = "scripted"
base_url = "` + model.URL + `"
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

# No start-up sync of the curated plugins from GitHub.
[features]
plugins = false

`
	writeFile(t, home, "config.toml", header+cfg)
	env, _ := e.cliEnv(t, "CODEX_HOME="+home, "SCRIPTED_API_KEY=dummy")
	out := runHeadless(t, e, label, model, env, "all done", codex, "exec", "--json", "--skip-git-repo-check", "Use the JSON tools on data.json.")
	if !strings.Contains(out, `"type":"turn.completed"`) {
		t.Errorf("codex did not finish the turn:\n%s", out)
	}
	return model
}

// TestCodex drives the real Codex CLI (scripts/ci-deps/codex.sh) through
// toolgate, configured by what `toolgate mcp-config --harness codex`
// prints, over stdio and over HTTP to the daemon; see harnessEnv.check
// for what each run must show. In stdio mode a second run with keys left
// out of enabled_tools shows the harness enforcing the allowlist form
// mcp-config writes.
func TestCodex(t *testing.T) {
	harnessCase{name: "codex", naming: codexNaming, run: runCodex,
		wantInConfig: []string{`default_tools_approval_mode = "approve"`, `enabled_tools = ["query", "keys", "validate", "edit-in-place"]`},
		narrow: func(cfg string) string {
			return strings.Replace(cfg, `"query", "keys", "validate"`, `"query", "validate"`, 1)
		}}.test(t)
}
