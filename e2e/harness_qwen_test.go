package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// qwenBase is the part of ~/.qwen/settings.json a test adds to
// mcp-config's output: the OpenAI-compatible provider (the scripted Chat
// Completions endpoint) and no telemetry, usage statistics or update
// checks.
const qwenBase = `{
  "security": {"auth": {"selectedType": "openai"}},
  "model": {"name": "scripted-model"},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}`

// runQwen runs `qwen -p` headless with settings.json = qwenBase and cfg
// (mcp-config's output) against the scripted Chat Completions endpoint.
func runQwen(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel {
	t.Helper()
	cli := harnessCLI(t, "qwen", "qwen", "qwen.sh")
	model := startChat(t, claudeNaming, turns)
	env, home := e.cliEnv(t, "OPENAI_API_KEY=dummy", "OPENAI_BASE_URL="+model.URL, "OPENAI_MODEL=scripted-model")
	writeFile(t, filepath.Join(home, ".qwen"), "settings.json", string(mergeJSON(t, qwenBase, cfg)))
	runHeadless(t, e, label, model, env, "all done", cli, "-p", "Use the JSON tools on data.json.", "--output-format", "json")
	return model
}

// TestQwenCode drives the real Qwen Code CLI (scripts/ci-deps/qwen.sh)
// through toolgate, configured by what `toolgate mcp-config --harness
// qwen` prints, over stdio and over HTTP to the daemon; see
// harnessEnv.check. In stdio mode a second run with keys left out of
// includeTools and permissions.allow shows the harness enforcing them.
func TestQwenCode(t *testing.T) {
	harnessCase{name: "qwen", naming: claudeNaming, run: runQwen,
		wantInConfig: []string{`"mcp__json-tools__keys"`, `"includeTools"`, `"alwaysLoadTools": true`},
		narrow: func(cfg string) string {
			return strings.Replace(strings.Replace(cfg, "\"keys\",\n", "", 1), "\"mcp__json-tools__keys\",\n", "", 1)
		}}.test(t)
}
