package harness

import "github.com/toolgate/toolgate/grantcheck"

// Qwen Code (a Gemini CLI fork) reads ~/.qwen/settings.json (or the
// project's .qwen/settings.json): "mcpServers" as Gemini CLI writes them
// (command/args/env or httpUrl/headers, includeTools per server; ${VAR} is
// expanded in settings strings). It names an MCP tool as Claude Code does,
// mcp__<server>__<tool>, and its allowlist is permissions.allow, rules in
// that naming (mcp__<server> for a whole server): headless (-p), Qwen Code
// runs without asking only what the rules allow, so they list exactly the
// granted tools and toolgate holds what needs approval. alwaysLoadTools
// offers the tools to the model directly: otherwise Qwen Code defers MCP
// tools behind its tool_search/tool_call bridge.
func qwenConfig(servers []server) ([]byte, error) {
	allow := []string{}
	for _, s := range servers {
		allow = append(allow, harnessNames(grantcheck.NamingClaude, s)...)
	}
	out := geminiServers(servers)
	for id, s := range out {
		s.AlwaysLoadTools = true
		out[id] = s
	}
	return marshal(map[string]any{"mcpServers": out, "permissions": map[string]any{"allow": allow}})
}
