package harness

import "fmt"

// Cline CLI reads ~/.cline/data/settings/cline_mcp_settings.json (under
// --data-dir DIR: DIR/settings/): "mcpServers" with type stdio and
// command/args, or type streamableHttp with url/headers. It has no
// per-tool allowlist for MCP servers (its settings.json disabledTools is a
// denylist, and every tool is auto-approved by default), so toolgate's
// grant is the bound: toolgate lists the agent only what it is granted.
// Cline passes a launched server its whole environment and expands no
// variables in the file, so a stdio entry carries no env, and an HTTP
// entry cannot reference a token: mcp-config refuses HTTP for Cline
// rather than print a token.
type clineServer struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
}

func clineConfig(servers []server) ([]byte, error) {
	out := map[string]clineServer{}
	for _, s := range servers {
		if s.url != "" {
			return nil, fmt.Errorf("cline does not expand environment variables in cline_mcp_settings.json, so an HTTP entry would have to hold the agent's token, and toolgate never prints one; use --mode stdio (Cline launches toolgate serve --stdio with its own environment), or write the streamableHttp entry with its Authorization header yourself")
		}
		out[s.name] = clineServer{Type: "stdio", Command: s.command, Args: s.args}
	}
	return marshal(map[string]any{"mcpServers": out})
}
