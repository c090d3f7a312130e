package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParityHarnessForms reads each harness's own allowlist forms and
// naming — Codex enabled_tools/disabled_tools and its '-'→'_' names,
// Gemini CLI includeTools/excludeTools/tools.allowed, OpenCode's tools and
// permission maps with globs where the last match wins — and checks the
// verdict, including the attacks: a rule order that re-opens a tool, a key
// written twice, names two surfaces could both produce.
func TestParityHarnessForms(t *testing.T) {
	t.Parallel()
	_, p := load(t, "testdata/parity/harnesses.yaml")
	dir := t.TempDir()
	file := func(name, data string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	list := func(agent string, h Harness, entries ...string) SpecRow {
		return SpecRow{Agent: agent, Provider: h, HasAllowedTools: true, AllowedTools: entries}
	}
	cases := []struct {
		name        string
		row         SpecRow
		verdict     Verdict
		harnessOnly string
		grantOnly   string
		note        string
	}{
		// Codex.
		{name: "codex names as the model sees them", row: list("kit", Codex,
			"mcp__json_kit__query", "mcp__json_kit__keys", "mcp__json_kit__edit_in_place"), verdict: Green},
		{name: "codex names as configured", row: list("kit", Codex,
			"mcp__json-kit__query", "mcp__json-kit__keys", "mcp__json-kit__edit-in-place"), verdict: Green},
		{name: "codex namespace covers the write", row: list("kitread", Codex, "mcp__json_kit"),
			verdict: Red, harnessOnly: "tool:json-kit:edit-in-place"},
		{name: "codex disabled_tools subtracts", row: SpecRow{Agent: "kitread", Provider: Codex, ConfigTOML: file("disabled.toml",
			"[mcp_servers.json-kit]\ncommand = \"x\"\ndefault_tools_approval_mode = \"approve\"\ndisabled_tools = [\"edit-in-place\"]\n")}, verdict: Green},
		{name: "codex enabled less disabled", row: SpecRow{Agent: "kitread", Provider: Codex, ConfigTOML: file("both.toml",
			"[mcp_servers.json-kit]\ncommand = \"x\"\nenabled_tools = [\"query\", \"keys\", \"edit-in-place\"]\ndisabled_tools = [\"keys\", \"edit-in-place\"]\n")},
			verdict: Red, grantOnly: "tool:json-kit:keys", note: "codex exec refuses it"},
		{name: "codex disabled_tools on an unknown server", row: SpecRow{Agent: "far", Provider: Codex, ConfigTOML: file("far.toml",
			"[mcp_servers.far]\nurl = \"http://x\"\ndisabled_tools = [\"wipe\"]\n")}, verdict: Red, note: "cannot be compared"},
		// Gemini CLI.
		{name: "gemini names", row: list("kit", Gemini, "mcp_json-kit_query", "mcp_json-kit_keys", "mcp_json-kit_edit-in-place"), verdict: Green},
		{name: "gemini server pattern", row: list("far", Gemini, "mcp_far_*"), verdict: Green},
		{name: "gemini mcp_* is every tool", row: list("far", Gemini, "mcp_*"), verdict: Red, harnessOnly: "tool:*"},
		{name: "gemini a_b_x could be either surface", row: list("ab", Gemini, "mcp_a_y", "mcp_a_b_x"), verdict: Red, note: "each of a, a_b"},
		{name: "gemini includeTools with tools.allowed", row: SpecRow{Agent: "kitread", Provider: Gemini, Settings: file("g1.json",
			`{"mcpServers": {"json-kit": {"command": "x"}}, "tools": {"allowed": ["mcp_json-kit_query", "mcp_json-kit_keys"]}}`)}, verdict: Green},
		{name: "gemini tools.allowed narrows what headless offers", row: SpecRow{Agent: "kit", Provider: Gemini, Settings: file("g2.json",
			`{"mcpServers": {"json-kit": {"command": "x"}}, "tools": {"allowed": ["mcp_json-kit_query"]}}`)},
			verdict: Red, grantOnly: "tool:json-kit:edit-in-place,tool:json-kit:keys"},
		{name: "gemini trust with excludeTools and tools.exclude", row: SpecRow{Agent: "kitread", Provider: Gemini, Settings: file("g3.json",
			`{"mcpServers": {"json-kit": {"command": "x", "trust": true, "excludeTools": ["edit-in-place"]}}, "tools": {"exclude": ["mcp_json-kit_keys"]}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys"},
		{name: "gemini mcp.excluded turns a server off", row: SpecRow{Agent: "kitread", Provider: Gemini, Settings: file("g4.json",
			`{"mcpServers": {"json-kit": {"command": "x", "trust": true}}, "mcp": {"excluded": ["json-kit"]}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys,tool:json-kit:query", note: "mcp.excluded"},
		{name: "gemini shell pre-approval is beyond the grant", row: SpecRow{Agent: "far", Provider: Gemini, Settings: file("g5.json",
			`{"mcpServers": {"far": {"httpUrl": "http://x", "trust": true}}, "tools": {"allowed": ["run_shell_command(git)"]}}`)},
			verdict: Red, harnessOnly: "tool:shell:git"},
		{name: "gemini nothing pre-approved", row: SpecRow{Agent: "kitread", Provider: Gemini, Settings: file("g6.json",
			`{"mcpServers": {"json-kit": {"command": "x", "includeTools": ["query", "keys"]}}}`)}, verdict: Green, note: "offers the model none of them"},
		// OpenCode.
		{name: "opencode names", row: list("kit", OpenCode, "json-kit_*"), verdict: Green},
		{name: "opencode glob", row: list("kitread", OpenCode, "json-kit_?uery", "*_keys"), verdict: Green},
		{name: "opencode tools map as mcp-config writes it", row: SpecRow{Agent: "kitread", Provider: OpenCode, Settings: file("o1.json",
			`{"mcp": {"json-kit": {"type": "local", "command": ["x"]}}, "tools": {"json-kit_*": false, "json-kit_query": true, "json-kit_keys": true}}`)}, verdict: Green},
		{name: "opencode last match wins", row: SpecRow{Agent: "kitread", Provider: OpenCode, Settings: file("o2.json",
			`{"mcp": {"json-kit": {"type": "local", "command": ["x"]}}, "tools": {"json-kit_query": true, "json-kit_keys": true, "json-kit_*": false}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys,tool:json-kit:query"},
		{name: "opencode permission comes after tools", row: SpecRow{Agent: "kitread", Provider: OpenCode, Settings: file("o3.json",
			`{"permission": {"json-kit_edit-in-place": "allow"}, "mcp": {"json-kit": {"type": "local", "command": ["x"]}}, "tools": {"json-kit_edit-in-place": false}}`)},
			verdict: Red, harnessOnly: "tool:json-kit:edit-in-place"},
		{name: "opencode key written twice keeps its first place", row: SpecRow{Agent: "kitread", Provider: OpenCode, Settings: file("o4.json",
			`{"mcp": {"json-kit": {"type": "local", "command": ["x"]}}, "tools": {"json-kit_*": true, "json-kit_edit-in-place": false, "json-kit_*": true}}`)}, verdict: Green},
		{name: "opencode ask is rejected headless", row: SpecRow{Agent: "kit", Provider: OpenCode, Settings: file("o5.json",
			`{"mcp": {"json-kit": {"type": "local", "command": ["x"]}}, "permission": {"json-kit_edit-in-place": "ask"}}`)},
			verdict: Red, grantOnly: "tool:json-kit:edit-in-place", note: "opencode run rejects"},
		{name: "opencode disabled server", row: SpecRow{Agent: "kitread", Provider: OpenCode, Settings: file("o6.json",
			`{"mcp": {"json-kit": {"type": "local", "command": ["x"], "enabled": false}}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys,tool:json-kit:query"},
		{name: "opencode unknown server allowed whole", row: SpecRow{Agent: "far", Provider: OpenCode, Settings: file("o7.json",
			`{"mcp": {"far": {"type": "remote", "url": "http://x"}}}`)}, verdict: Green},
		{name: "opencode overlapping surfaces", row: SpecRow{Agent: "ab", Provider: OpenCode, Settings: file("o8.json",
			`{"mcp": {"a": {"type": "local", "command": ["x"]}, "a_b": {"type": "local", "command": ["x"]}}, "tools": {"a_*": false, "a_b_*": true, "a_y": true}}`)},
			verdict: Red, note: "each of a, a_b"},
		{name: "opencode comments are not read", row: SpecRow{Agent: "kitread", Provider: OpenCode, Settings: file("o9.json",
			"{\n  // jsonc\n  \"mcp\": {}\n}")}, verdict: Red, note: "cannot read the allowlist"},
		// Qwen Code: mcpServers as Gemini CLI, permissions rules in Claude naming.
		{name: "qwen settings as mcp-config writes them", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("q1.json",
			`{"mcpServers": {"json-kit": {"command": "x", "includeTools": ["query", "keys"]}}, "permissions": {"allow": ["mcp__json-kit__query", "mcp__json-kit__keys"]}}`)}, verdict: Green},
		{name: "qwen server rule covers the write", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("q2.json",
			`{"mcpServers": {"json-kit": {"command": "x"}}, "permissions": {"allow": ["mcp__json-kit"]}}`)},
			verdict: Red, harnessOnly: "tool:json-kit:edit-in-place"},
		{name: "qwen excludeTools and deny subtract", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("q3.json",
			`{"mcpServers": {"json-kit": {"command": "x", "excludeTools": ["edit-in-place"]}}, "permissions": {"allow": ["mcp__*"], "deny": ["mcp__json-kit__k*"]}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys"},
		{name: "qwen trailing glob", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("q4.json",
			`{"mcpServers": {"json-kit": {"command": "x", "includeTools": ["query", "keys"]}}, "permissions": {"allow": ["mcp__json-kit__*"]}}`)}, verdict: Green},
		{name: "qwen nothing allowed", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("q5.json",
			`{"mcpServers": {"json-kit": {"command": "x"}}}`)}, verdict: Red, grantOnly: "tool:json-kit:keys,tool:json-kit:query", note: "runs no MCP tool without asking"},
		{name: "qwen unknown server whole", row: SpecRow{Agent: "far", Provider: Qwen, Settings: file("q6.json",
			`{"mcpServers": {"far": {"httpUrl": "http://x"}}, "permissions": {"allow": ["mcp__far"]}}`)}, verdict: Green},
		{name: "qwen shell rule is beyond the grant", row: SpecRow{Agent: "far", Provider: Qwen, Settings: file("q7.json",
			`{"mcpServers": {"far": {"httpUrl": "http://x"}}, "permissions": {"allow": ["mcp__far", "Bash(git:*)"]}}`)},
			verdict: Red, harnessOnly: "tool:shell:git"},
		// GitHub Copilot CLI: tools per server in mcp-config.json.
		{name: "copilot tools as mcp-config writes them", row: SpecRow{Agent: "kitread", Provider: Copilot, Settings: file("c1.json",
			`{"mcpServers": {"json-kit": {"type": "stdio", "command": "x", "tools": ["query", "keys"]}}}`)}, verdict: Green},
		{name: "copilot star covers the write", row: SpecRow{Agent: "kitread", Provider: Copilot, Settings: file("c2.json",
			`{"mcpServers": {"json-kit": {"type": "stdio", "command": "x", "tools": ["*"]}}}`)},
			verdict: Red, harnessOnly: "tool:json-kit:edit-in-place"},
		{name: "copilot no tools list is every tool", row: SpecRow{Agent: "kitread", Provider: Copilot, Settings: file("c3.json",
			`{"mcpServers": {"json-kit": {"type": "stdio", "command": "x", "excludeTools": ["keys"]}}}`)},
			verdict: Red, harnessOnly: "tool:json-kit:edit-in-place", grantOnly: "tool:json-kit:keys"},
		{name: "copilot unknown server whole", row: SpecRow{Agent: "far", Provider: Copilot, Settings: file("c4.json",
			`{"mcpServers": {"far": {"url": "http://x", "tools": ["*"]}}}`)}, verdict: Green},
		// Crush: enabled_tools less disabled_tools per server.
		{name: "crush enabled_tools as mcp-config writes them", row: SpecRow{Agent: "kitread", Provider: Crush, Settings: file("r1.json",
			`{"mcp": {"json-kit": {"type": "stdio", "command": "x", "enabled_tools": ["query", "keys"]}}, "permissions": {"allowed_tools": ["mcp_json-kit_query"]}}`)}, verdict: Green},
		{name: "crush no enabled_tools is every tool", row: SpecRow{Agent: "kitread", Provider: Crush, Settings: file("r2.json",
			`{"mcp": {"json-kit": {"type": "stdio", "command": "x", "disabled_tools": ["keys"]}}}`)},
			verdict: Red, harnessOnly: "tool:json-kit:edit-in-place", grantOnly: "tool:json-kit:keys"},
		{name: "crush disabled server", row: SpecRow{Agent: "kitread", Provider: Crush, Settings: file("r3.json",
			`{"mcp": {"json-kit": {"type": "stdio", "command": "x", "disabled": true}}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys,tool:json-kit:query", note: "disabled"},
		{name: "crush unknown server with disabled_tools", row: SpecRow{Agent: "far", Provider: Crush, Settings: file("r4.json",
			`{"mcp": {"far": {"type": "http", "url": "http://x", "disabled_tools": ["wipe"]}}}`)}, verdict: Red, note: "cannot be compared"},
		// Cline has no per-tool MCP allowlist: unknown, never green.
		{name: "cline is unknown", row: list("kitread", Cline, "json-kit__query", "json-kit__keys"), verdict: Unknown, note: "cannot enforce a per-tool allowlist"},
		// Files the harness itself would not load are red, not read as allow-all.
		{name: "qwen allow as a string", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("h1.json",
			`{"mcpServers": {"json-kit": {"command": "x"}}, "permissions": {"allow": "mcp__*"}}`)}, verdict: Red, note: "cannot read the allowlist"},
		{name: "copilot tools as a string", row: SpecRow{Agent: "kitread", Provider: Copilot, Settings: file("h2.json",
			`{"mcpServers": {"json-kit": {"command": "x", "tools": "*"}}}`)}, verdict: Red, note: "cannot read the allowlist"},
		{name: "crush enabled_tools with a number", row: SpecRow{Agent: "kitread", Provider: Crush, Settings: file("h3.json",
			`{"mcp": {"json-kit": {"type": "stdio", "enabled_tools": ["query", 7]}}}`)}, verdict: Red, note: "cannot read the allowlist"},
		{name: "qwen rule with a specifier grants nothing", row: SpecRow{Agent: "kitread", Provider: Qwen, Settings: file("h4.json",
			`{"mcpServers": {"json-kit": {"command": "x", "includeTools": ["query", "keys"]}}, "permissions": {"allow": ["mcp__json-kit__query", "mcp__json-kit__keys(x)"]}}`)},
			verdict: Red, grantOnly: "tool:json-kit:keys"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			row := tc.row
			got := Check(p, &Spec{Rows: []*SpecRow{&row}}).Rows[0]
			if got.Verdict != tc.verdict {
				t.Errorf("verdict = %s, want %s (harness %v, note: %s)", got.Verdict, tc.verdict, got.Harness, got.Note)
			}
			if tc.harnessOnly != "" || tc.verdict == Green {
				if h := strings.Join(got.Delta.HarnessOnly, ","); h != tc.harnessOnly {
					t.Errorf("harness only = %q, want %q", h, tc.harnessOnly)
				}
			}
			if tc.grantOnly != "" || tc.verdict == Green {
				if g := strings.Join(got.Delta.GrantOnly, ","); g != tc.grantOnly {
					t.Errorf("grant only = %q, want %q", g, tc.grantOnly)
				}
			}
			if !strings.Contains(got.Note, tc.note) {
				t.Errorf("note %q does not contain %q", got.Note, tc.note)
			}
		})
	}
}
