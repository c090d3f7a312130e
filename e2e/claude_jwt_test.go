package e2e

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/e2e/scriptedmodel"
)

const claudeJWTWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  identity:
    jwt: {issuer: "https://idp.example", jwks_file: jwks.json, audience: "https://toolgate.test"}
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    grants: [pack:json-tools]
`

// TestClaudeCodeJWT: the real Claude Code, over HTTP to the daemon, sends
// an OAuth access token (a JWT this test signs) as the bearer token from
// the ${VAR} reference `mcp-config --mode http` writes for an agent that
// has no static token, and calls a tool with it.
func TestClaudeCodeJWT(t *testing.T) {
	t.Parallel()
	claude := claudeBinary(t)
	key := newSigner(t, "k1")
	dir := t.TempDir()
	writeFile(t, dir, "jwks.json", string(jwksDoc(t, key)))
	ws := writeFile(t, dir, "toolgate.yaml", claudeJWTWorkspace)
	data := writeFile(t, dir, "data.json", `{"name":"toolgate","items":[1,2]}`)
	d := startFleetDaemon(t, ws, nil)
	now := time.Now()
	token := key.token(t, map[string]any{"iss": "https://idp.example", "aud": "https://toolgate.test/mcp/json-tools", "sub": "reader",
		"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()})

	cfg := toolgate(t, dir, nil, "mcp-config", "-w", ws, "--agent", "reader", "--harness", "claude", "--mode", "http", "--url", d.base)
	if cfg.code != 0 || !strings.Contains(cfg.stdout, `"Authorization": "Bearer ${TOOLGATE_TOKEN_READER}"`) || strings.Contains(cfg.stdout, token) {
		t.Fatalf("mcp-config: exit %d\n%s%s", cfg.code, cfg.stdout, cfg.stderr)
	}
	if !strings.Contains(cfg.stderr, "OAuth access token") {
		t.Errorf("mcp-config says nothing about the access token:\n%s", cfg.stderr)
	}
	al := toolgate(t, dir, nil, "mcp-config", "-w", ws, "--agent", "reader", "--harness", "claude", "--allowed-tools")
	if al.code != 0 {
		t.Fatalf("mcp-config --allowed-tools: %s", al.stderr)
	}

	model := scriptedmodel.Start(scriptedmodel.Options{MainTool: claudeNaming("json-tools", "query"), FinalText: "all done", Turns: []scriptedmodel.Turn{
		{{Name: claudeNaming("json-tools", "query"), Input: map[string]any{"filter": ".name", "file": data}}},
	}})
	t.Cleanup(model.Close)
	e := &harnessEnv{mode: "stdio", dir: dir} // stdio: cliEnv adds no static token
	env, home := e.cliEnv(t, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=dummy",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false",
		"TOOLGATE_TOKEN_READER="+token)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "Use the JSON tools on data.json.", "--output-format", "json",
		"--mcp-config", writeFile(t, home, "mcp.json", cfg.stdout), "--strict-mcp-config", "--allowed-tools", strings.TrimSpace(al.stdout))
	cmd.Dir = dir
	cmd.Env = env
	out := runCLI(t, "claude jwt", cmd, model)
	var res claudeResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || res.IsError || res.Result != "all done" {
		t.Errorf("claude output (%v):\n%s", err, out)
	}
	results := model.Results()
	// Claude Code hands its model the structuredContent toolgate adds to
	// jq's "toolgate" (docs/harnesses.md).
	if len(results) != 1 || results[0].IsError || strings.TrimSpace(results[0].Text) != `{"result":"toolgate"}` {
		t.Fatalf("the model received %+v, want jq's \"toolgate\" as {\"result\":\"toolgate\"}", results)
	}
	var got []string
	for _, ev := range readClaudeAudit(t, filepath.Join(dir, "audit.jsonl")) {
		got = append(got, ev.Agent+" "+ev.Action+" "+ev.Decision)
	}
	if strings.Join(got, ",") != "reader command:call:json-tools:query allow,reader command:call:json-tools:query completed" {
		t.Fatalf("audit: %v", got)
	}
}
