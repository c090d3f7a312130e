package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// copilotNaming is how GitHub Copilot CLI names an MCP tool to its model:
// <server>-<tool>.
func copilotNaming(surface, tool string) string { return surface + "-" + tool }

// runCopilot runs `copilot -p` headless with cfg (mcp-config's output) as
// ~/.copilot/mcp-config.json, against the scripted Chat Completions
// endpoint as a bring-your-own-key provider (COPILOT_PROVIDER_*), offline
// (COPILOT_OFFLINE: no GitHub sign-in, no telemetry, no built-in GitHub
// MCP servers), with the --allow-tool values `toolgate mcp-config
// --harness copilot --allowed-tools` prints: headless, Copilot runs a tool
// marked read-only without asking and refuses any other it would ask
// about, so without them the writes would never reach toolgate.
func runCopilot(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel {
	t.Helper()
	cli := harnessCLI(t, "copilot", "copilot", "copilot.sh")
	model := startChat(t, copilotNaming, turns)
	env, home := e.cliEnv(t, "COPILOT_OFFLINE=true", "COPILOT_AUTO_UPDATE=false", "COPILOT_PROVIDER_TYPE=openai",
		"COPILOT_PROVIDER_BASE_URL="+model.URL, "COPILOT_PROVIDER_API_KEY=dummy", "COPILOT_PROVIDER_WIRE_API=completions",
		"COPILOT_PROVIDER_MODEL_ID=scripted-model")
	writeFile(t, home+"/.copilot", "mcp-config.json", cfg)
	allow := strings.Fields(e.mcpConfig(t, "copilot", "--allowed-tools"))
	if !slices.Contains(allow, "json-tools(edit-in-place)") || slices.Contains(allow, "notes(purge)") {
		t.Fatalf("mcp-config --harness copilot --allowed-tools: %v", allow)
	}
	args := []string{"-p", "Use the JSON tools on data.json.", "--model", "scripted-model", "--no-ask-user", "--disable-builtin-mcps", "-s"}
	for _, a := range allow {
		args = append(args, "--allow-tool="+a)
	}
	runHeadless(t, e, label, model, env, "all done", cli, args...)
	return model
}

// TestCopilotCLI drives the real GitHub Copilot CLI
// (scripts/ci-deps/copilot.sh) through toolgate, configured by what
// `toolgate mcp-config --harness copilot` prints, over stdio and over HTTP
// to the daemon; see harnessEnv.check. In stdio mode a second run with
// keys taken out of the server's tools list shows Copilot enforcing it
// (its --allow-tool value left in: the tools list is what bounds it).
func TestCopilotCLI(t *testing.T) {
	harnessCase{name: "copilot", naming: copilotNaming, run: runCopilot,
		wantInConfig: []string{`"tools": [`, `"keys"`, `"deferTools": "never"`},
		narrow:       func(cfg string) string { return strings.Replace(cfg, "\"keys\",\n", "", 1) }}.test(t)
}
