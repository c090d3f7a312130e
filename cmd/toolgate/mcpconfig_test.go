package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestMCPConfigCLI(t *testing.T) {
	t.Parallel()
	absDemo, err := filepath.Abs(demoWorkspace)
	if err != nil {
		t.Fatal(err)
	}
	fileToken := writeGrantFile(t, "toolgate.yaml", `
version: 1
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    token: {file: /run/secrets/reader}
    grants: [pack:json-tools]
`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"allowed tools", []string{"--agent", "reader", "--harness", "claude", "--allowed-tools"}, exitOK,
			[]string{"mcp__json-tools__query,mcp__json-tools__keys,mcp__json-tools__validate,mcp__notes__list,mcp__notes__remove\n"}, nil},
		{"settings", []string{"--agent", "editor", "--harness", "claude", "--settings"}, exitOK,
			[]string{`"allow": [`, `"mcp__json-tools__edit-in-place"`}, nil},
		{"claude stdio", []string{"--agent", "editor", "--harness", "claude", "--toolgate", "/opt/toolgate"}, exitOK,
			[]string{`"command": "/opt/toolgate"`, `"` + absDemo + `"`, `"--surface",` + "\n" + `        "json-tools"`}, nil},
		{"codex http", []string{"--agent", "editor", "--harness", "codex", "--mode", "http", "--url", "http://gw:9/"}, exitOK,
			[]string{"[mcp_servers.json-tools]\nurl = \"http://gw:9/mcp/json-tools\"\nbearer_token_env_var = \"EDITOR_TOKEN\"\ndefault_tools_approval_mode = \"approve\"\nenabled_tools = [\"edit-in-place\"]\n"}, nil},
		{"gemini pre-approves the grant", []string{"--agent", "editor", "--harness", "gemini"}, exitOK,
			[]string{`"includeTools": [` + "\n" + `        "edit-in-place"`, `"allowed": [` + "\n" + `      "mcp_json-tools_edit-in-place"`}, nil},
		{"opencode tools map in order", []string{"--agent", "reader", "--harness", "opencode", "--mode", "http"}, exitOK,
			[]string{`"tools": {` + "\n" + `    "json-tools_*": false,` + "\n" + `    "notes_*": false,` + "\n" + `    "json-tools_query": true,`,
				`"notes_remove": true` + "\n" + `  }`}, nil},
		{"allowed tools for codex", []string{"--agent", "reader", "--harness", "codex", "--allowed-tools"}, exitUsage,
			nil, []string{"Copilot CLI's --allow-tool", "for codex the allowlist is part of the config"}},
		{"settings for copilot", []string{"--agent", "reader", "--harness", "copilot", "--settings"}, exitUsage,
			nil, []string{"--settings is Claude Code's allowlist"}},
		{"copilot allow-tool values", []string{"--agent", "reader", "--harness", "copilot", "--allowed-tools"}, exitOK,
			[]string{"json-tools(query)\njson-tools(keys)\njson-tools(validate)\nnotes(list)\nnotes(remove)\n"}, nil},
		{"qwen permissions.allow", []string{"--agent", "editor", "--harness", "qwen"}, exitOK,
			[]string{`"alwaysLoadTools": true`, `"allow": [` + "\n" + `      "mcp__json-tools__edit-in-place"`}, nil},
		{"crush http", []string{"--agent", "editor", "--harness", "crush", "--mode", "http", "--url", "http://gw:9"}, exitOK,
			[]string{`"url": "http://gw:9/mcp/json-tools"`, `"Authorization": "Bearer ${EDITOR_TOKEN}"`, `"allowed_tools": [` + "\n" + `      "mcp_json-tools_edit-in-place"`}, nil},
		{"cline http refused", []string{"--agent", "editor", "--harness", "cline", "--mode", "http"}, exitFail,
			nil, []string{"cline does not expand environment variables", "--mode stdio"}},
		{"unknown harness", []string{"--agent", "reader", "--harness", "windsurf"}, exitUsage, nil, []string{`unknown harness "windsurf"`}},
		{"no agent", []string{"--harness", "claude"}, exitUsage, nil, []string{"--agent ID is required"}},
		{"unknown agent", []string{"--agent", "ghost", "--harness", "claude"}, exitFail, nil, []string{`"ghost"`}},
		{"bad mode", []string{"--agent", "reader", "--harness", "claude", "--mode", "sse"}, exitUsage, nil, []string{"use stdio or http"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runGrantCLI(t, append([]string{"mcp-config", "-w", demoWorkspace}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, out, errOut)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout does not contain %q:\n%s", w, out)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not contain %q:\n%s", w, errOut)
				}
			}
		})
	}
	t.Run("file token over http", func(t *testing.T) {
		t.Parallel()
		code, _, errOut := runGrantCLI(t, "mcp-config", "-w", fileToken, "--agent", "reader", "--harness", "vscode", "--mode", "http")
		if code != exitFail || !strings.Contains(errOut, "reads its token from a file") || strings.Contains(errOut, "/run/secrets") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
	})
	jwtWS := writeGrantFile(t, "toolgate.yaml", `
version: 1
gateway:
  identity:
    jwt: {issuer: "https://idp.example", jwks_url: "https://idp.example/jwks", audience: "https://gw.example"}
command_packs:
  - use: bundled/json-tools
agents:
  - id: ci-bot
    grants: [pack:json-tools]
  - id: reader
    token: {env: READER_TOKEN}
    grants: [pack:json-tools]
`)
	t.Run("jwt: an agent without a static token reads its access token from a variable", func(t *testing.T) {
		t.Parallel()
		for h, ref := range map[string]string{"claude": "Bearer ${TOOLGATE_TOKEN_CI_BOT}", "vscode": "Bearer ${env:TOOLGATE_TOKEN_CI_BOT}",
			"cursor": "Bearer ${env:TOOLGATE_TOKEN_CI_BOT}", "gemini": "Bearer ${TOOLGATE_TOKEN_CI_BOT}", "opencode": "Bearer {env:TOOLGATE_TOKEN_CI_BOT}",
			"codex": `bearer_token_env_var = "TOOLGATE_TOKEN_CI_BOT"`} {
			code, out, errOut := runGrantCLI(t, "mcp-config", "-w", jwtWS, "--agent", "ci-bot", "--harness", h, "--mode", "http")
			if code != exitOK || !strings.Contains(out, ref) {
				t.Errorf("%s: exit %d, stdout lacks %q:\n%s\n%s", h, code, ref, out, errOut)
			}
			for _, w := range []string{"gateway.identity.jwt is set", "https://idp.example", "aud https://gw.example", `claim "sub" = "ci-bot"`, "resource_metadata", "restart"} {
				if !strings.Contains(errOut, w) {
					t.Errorf("%s: the note lacks %q:\n%s", h, w, errOut)
				}
			}
		}
	})
	t.Run("jwt: a static token still names its variable; --token-env overrides", func(t *testing.T) {
		t.Parallel()
		if code, out, _ := runGrantCLI(t, "mcp-config", "-w", jwtWS, "--agent", "reader", "--harness", "claude", "--mode", "http"); code != exitOK || !strings.Contains(out, "${READER_TOKEN}") {
			t.Errorf("static token: %d %s", code, out)
		}
		if code, out, _ := runGrantCLI(t, "mcp-config", "-w", jwtWS, "--agent", "reader", "--harness", "claude", "--mode", "http", "--token-env", "MY_JWT"); code != exitOK || !strings.Contains(out, "${MY_JWT}") {
			t.Errorf("--token-env: %d %s", code, out)
		}
		if code, _, errOut := runGrantCLI(t, "mcp-config", "-w", jwtWS, "--agent", "reader", "--harness", "claude", "--mode", "http", "--token-env", "$(rm -rf /)"); code != exitFail || !strings.Contains(errOut, "environment variable name") {
			t.Errorf("hostile --token-env: %d %s", code, errOut)
		}
	})
	t.Run("every harness writes valid output", func(t *testing.T) {
		t.Parallel()
		for _, h := range []string{"claude", "cursor", "gemini", "vscode", "opencode"} {
			code, out, errOut := runGrantCLI(t, "mcp-config", "-w", demoWorkspace, "--agent", "reader", "--harness", h, "--mode", "http")
			if code != exitOK {
				t.Fatalf("%s: exit %d: %s", h, code, errOut)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Errorf("%s: not JSON: %v\n%s", h, err, out)
			}
			if !strings.Contains(out, "READER_TOKEN") {
				t.Errorf("%s: the token variable is not referenced:\n%s", h, out)
			}
		}
	})
}
