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
)

// qwenBase is the part of ~/.qwen/settings.json a test adds to
// mcp-config's output: the OpenAI-compatible provider (the scripted Chat
// Completions endpoint) and no telemetry, usage statistics or update
// checks.
func qwenBase() string {
	return `{
  "security": {"auth": {"selectedType": "openai"}},
  "model": {"name": "scripted-model"},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}`
}

// runQwen runs `qwen -p` headless with settings.json = qwenBase and cfg
// (mcp-config's output) against the scripted Chat Completions endpoint.
func runQwen(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) *chatcompletions.Server {
	t.Helper()
	cli := harnessCLI(t, "qwen", "qwen", "qwen.sh")
	model := chatcompletions.Start(chatcompletions.Options{MainTool: claudeNaming("json-tools", "query"), FinalText: "all done", Turns: turns})
	t.Cleanup(model.Close)
	env, home := e.cliEnv(t, "OPENAI_API_KEY=dummy", "OPENAI_BASE_URL="+model.URL, "OPENAI_MODEL=scripted-model")
	writeFile(t, filepath.Join(home, ".qwen"), "settings.json", string(mergeJSON(t, qwenBase(), cfg)))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli, "-p", "Use the JSON tools on data.json.", "--output-format", "json")
	cmd.Dir = e.dir
	cmd.Env = env
	out := runCLI(t, label, cmd, model)
	if !strings.Contains(out, "all done") {
		t.Errorf("qwen did not finish:\n%s", out)
	}
	return model
}

// TestQwenCode drives the real Qwen Code CLI (scripts/ci-deps/qwen.sh)
// through toolgate, configured by what `toolgate mcp-config --harness
// qwen` prints, over stdio and over HTTP to the daemon; see
// harnessEnv.check. In stdio mode a second run with keys left out of
// includeTools and permissions.allow shows the harness enforcing them.
func TestQwenCode(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newHarnessEnv(t, mode)
			cfg := e.mcpConfig(t, "qwen")
			if !strings.Contains(cfg, `"mcp__json-tools__keys"`) || !strings.Contains(cfg, `"includeTools"`) {
				t.Fatalf("mcp-config --harness qwen lacks permissions.allow or includeTools:\n%s", cfg)
			}
			model := runQwen(t, e, "qwen "+mode, cfg, e.turns(claudeNaming))
			e.check(t, model, claudeNaming)
			if mode != "stdio" {
				return
			}
			n := newHarnessEnv(t, mode)
			narrowed := strings.ReplaceAll(strings.Replace(strings.Replace(cfg, "\"keys\",\n", "", 1), "\"mcp__json-tools__keys\",\n", "", 1), e.ws, n.ws)
			if strings.Contains(narrowed, "keys") {
				t.Fatalf("could not take keys out of the allowlist:\n%s", narrowed)
			}
			model = runQwen(t, n, "qwen narrowed allowlist", narrowed, n.narrowTurns(claudeNaming))
			n.checkNarrowed(t, model, claudeNaming, false)
		})
	}
}
