package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
	"github.com/toolgate/toolgate/grantcheck"
)

// claudeNaming is Claude Code's name for an MCP tool, the canonical one.
func claudeNaming(surface, tool string) string {
	return grantcheck.ToolName(grantcheck.NamingClaude, surface, tool)
}

// runClaude runs `claude -p` with the MCP config and --allowed-tools list
// mcp-config prints, against the scripted Messages endpoint.
func runClaude(t *testing.T, e *harnessEnv, label, cfg, allowed string, turns []scriptedmodel.Turn) *scriptedmodel.Server {
	t.Helper()
	claude := claudeBinary(t)
	model := scriptedmodel.Start(scriptedmodel.Options{MainTool: claudeNaming("json-tools", "query"), FinalText: "all done", Turns: turns})
	t.Cleanup(model.Close)
	env, home := e.cliEnv(t, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		// MCP tools listed up front, not behind the tool-search tool, so the
		// scripted model can call them by name in its first turn.
		"ENABLE_TOOL_SEARCH=false")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Use the JSON tools on data.json.", "--output-format", "json",
		"--mcp-config", writeFile(t, home, "mcp.json", cfg), "--strict-mcp-config", "--allowed-tools", allowed)
	cmd.Dir = e.dir
	cmd.Env = env
	out := runCLI(t, label, cmd, model)
	var res claudeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.IsError || res.Result != "all done" {
		t.Errorf("claude output (%v):\n%s", err, out)
	}
	return model
}

// TestClaudeCodeModes runs the script every harness plays (see
// harnessEnv.check) through the real Claude Code, over stdio and over
// HTTP to the daemon, where the agent's token reaches toolgate only
// through the ${READER_TOKEN} reference Claude Code expands in headers.
// In stdio mode a second run with keys left out of --allowed-tools shows
// that headless Claude Code refuses what it is not pre-approved for.
func TestClaudeCodeModes(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stdio", "http"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newHarnessEnv(t, mode)
			cfg := e.mcpConfig(t, "claude")
			if mode == "http" && !strings.Contains(cfg, "Bearer ${READER_TOKEN}") {
				t.Fatalf("mcp-config --mode http does not reference the token:\n%s", cfg)
			}
			allowed := strings.TrimSpace(e.mcpConfig(t, "claude", "--allowed-tools"))
			model := runClaude(t, e, "claude "+mode, cfg, allowed, e.turns(claudeNaming))
			e.check(t, model, claudeNaming)
			if mode != "stdio" {
				return
			}
			n := newHarnessEnv(t, mode)
			narrowed := strings.Replace(allowed, claudeNaming("json-tools", "keys")+",", "", 1)
			if narrowed == allowed {
				t.Fatalf("could not take keys out of %s", allowed)
			}
			model = runClaude(t, n, "claude narrowed allowlist", strings.ReplaceAll(cfg, e.ws, n.ws), narrowed, n.narrowTurns(claudeNaming))
			n.checkNarrowed(t, model, claudeNaming, true)
		})
	}
}
