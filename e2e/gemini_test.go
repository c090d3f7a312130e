package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
	"github.com/toolgate/toolgate/e2e/scriptedmodel/gemini"
	"github.com/toolgate/toolgate/grantcheck"
)

// geminiNaming is how Gemini CLI names an MCP tool: mcp_<server>_<tool>.
func geminiNaming(surface, tool string) string {
	return grantcheck.ToolName(grantcheck.NamingGemini, surface, tool)
}

// geminiBase is the part of settings.json a test adds to mcp-config's
// output: API-key auth (the key goes to the scripted endpoint), and no
// telemetry, usage statistics or update checks.
const geminiBase = `{
  "security": {"auth": {"selectedType": "gemini-api-key"}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
}`

// mergeJSON merges JSON objects, later ones winning key by key.
func mergeJSON(t *testing.T, docs ...string) []byte {
	t.Helper()
	out := map[string]any{}
	var merge func(dst, src map[string]any)
	merge = func(dst, src map[string]any) {
		for k, v := range src {
			if sm, ok := v.(map[string]any); ok {
				if dm, ok := dst[k].(map[string]any); ok {
					merge(dm, sm)
					continue
				}
			}
			dst[k] = v
		}
	}
	for _, d := range docs {
		var m map[string]any
		if err := json.Unmarshal([]byte(d), &m); err != nil {
			t.Fatalf("%v in %s", err, d)
		}
		merge(out, m)
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// runGemini runs `gemini -p` headless with settings.json = geminiBase and
// cfg (mcp-config's output), against the scripted Gemini endpoint
// (GOOGLE_GEMINI_BASE_URL), with -m so it skips its routing model and
// --skip-trust for the test's temporary folder.
func runGemini(t *testing.T, e *harnessEnv, label, cfg string, turns []scriptedmodel.Turn) scriptedModel {
	t.Helper()
	cli := harnessCLI(t, "gemini", "gemini", "gemini.sh")
	model := gemini.Start(gemini.Options{MainTool: geminiNaming("json-tools", "query"), FinalText: "all done", Turns: turns})
	t.Cleanup(model.Close)
	env, home := e.cliEnv(t, "GEMINI_API_KEY=dummy", "GOOGLE_GEMINI_BASE_URL="+model.URL, "GEMINI_CLI_NO_RELAUNCH=true")
	writeFile(t, filepath.Join(home, ".gemini"), "settings.json", string(mergeJSON(t, geminiBase, cfg)))
	out := runHeadless(t, e, label, model, env, "all done", cli, "-p", "Use the JSON tools on data.json.", "-m", "gemini-2.5-pro",
		"--output-format", "json", "--skip-trust")
	var res struct {
		Response string `json:"response"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.Response != "all done" {
		t.Errorf("gemini output (%v):\n%s", err, out)
	}
	return model
}

// TestGeminiCLI drives the real Gemini CLI (scripts/ci-deps/gemini.sh)
// through toolgate, configured by what `toolgate mcp-config --harness
// gemini` prints, over stdio and over HTTP to the daemon; see
// harnessEnv.check. Headless, Gemini CLI offers only tools its policy
// allows without confirmation, which the generated tools.allowed provides.
// In stdio mode a second run with keys left out of includeTools shows the
// harness enforcing that allowlist.
func TestGeminiCLI(t *testing.T) {
	harnessCase{name: "gemini", naming: geminiNaming, run: runGemini,
		wantInConfig: []string{`"mcp_json-tools_keys"`, `"includeTools"`},
		narrow:       func(cfg string) string { return strings.Replace(cfg, "\"keys\",\n", "", 1) }}.test(t)
}
