package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

// clineNaming is how Cline names an MCP tool to its model:
// <server>__<tool>.
func clineNaming(surface, tool string) string { return surface + "__" + tool }

// runCline runs `cline --json PROMPT` (act mode, tools auto-approved) with
// cfg (mcp-config's output) as cline_mcp_settings.json and an
// openai-compatible provider, configured by `cline auth`, pointing at the
// scripted Chat Completions endpoint, with telemetry and updates off.
func runCline(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel {
	t.Helper()
	cli := harnessCLI(t, "cline", "cline", "cline.sh")
	model := startChat(t, clineNaming, turns)
	env, home := e.cliEnv(t)
	// Cline starts a hub daemon of its own that outlives the CLI; it is
	// stopped with the test.
	t.Cleanup(func() { killClineHub(t, e.dir) })
	runHeadless(t, e, "cline auth", model, env, "Provider configured", cli, "auth", "-p", "openai", "-k", "dummy", "-m", "scripted-model", "-b", model.URL)
	settings := filepath.Join(home, ".cline", "data", "settings")
	writeFile(t, settings, "cline_mcp_settings.json", cfg)
	// No telemetry and feature flags (PostHog at data.cline.bot), no
	// update check.
	writeFile(t, settings, "global-settings.json", `{"telemetryOptOut": true, "autoUpdateEnabled": false}`)
	runHeadless(t, e, label, model, env, "all done", cli, "--json", "Use the JSON tools on data.json.")
	return model
}

// TestClineCLI drives the real Cline CLI (scripts/ci-deps/cline.sh)
// through toolgate, configured by what `toolgate mcp-config --harness
// cline` prints, over stdio; see harnessEnv.check. Cline has no per-tool
// MCP allowlist: the tool outside the grant is not offered because
// toolgate does not list it. mcp-config refuses HTTP for Cline (it would
// have to print the token).
func TestClineCLI(t *testing.T) {
	t.Run("run", harnessCase{name: "cline", naming: clineNaming, run: runCline, modes: []string{"stdio"},
		wantInConfig: []string{`"type": "stdio"`}}.test)
	t.Run("http refused", func(t *testing.T) {
		t.Parallel()
		h := newHarnessEnv(t, "http")
		r := toolgate(t, h.dir, nil, "mcp-config", "-w", h.ws, "--agent", "reader", "--harness", "cline", "--mode", "http", "--url", h.base)
		if r.code == 0 || !strings.Contains(r.stderr, "never prints") || strings.Contains(r.stdout+r.stderr, h.token) {
			t.Errorf("mcp-config --harness cline --mode http: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
		}
	})
}

// killClineHub stops the hub daemons Cline started for dir (their command
// line names it as --cwd) and says how many there were.
func killClineHub(t *testing.T, dir string) {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if slices.Contains(args, "--cline-hub-daemon") && slices.Contains(args, dir) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			n++
		}
	}
	if n > 0 {
		t.Logf("stopped %d Cline hub daemon(s) left behind by the CLI", n)
	}
}
