package harness

import "github.com/toolgate/toolgate/grantcheck"

// Crush reads crush.json or .crush.json in the project, or
// ~/.config/crush/crush.json (the format its schema publishes,
// charm.land/crush.json): "mcp" with type stdio and command/args/env, or
// type http with url/headers, $VAR and ${VAR} expanded, and enabled_tools
// as the per-server allowlist (what Crush offers the model). It names an
// MCP tool mcp_<server>_<tool>, as Gemini CLI does, and
// permissions.allowed_tools, exact names only, are the tools it runs
// without asking: the granted ones, so toolgate, not Crush, holds what
// needs approval. A server granted in bulk has no enabled_tools; its tools
// are pre-approved by name when the workspace lists them.
type crushServer struct {
	typedServer
	EnabledTools []string `json:"enabled_tools,omitempty"`
}

func crushConfig(servers []server) ([]byte, error) {
	out := map[string]crushServer{}
	allowed := []string{}
	for _, s := range servers {
		names := s.tools
		if names == nil {
			names = s.listed
		}
		for _, t := range names {
			allowed = append(allowed, grantcheck.ToolName(grantcheck.NamingGemini, s.name, t))
		}
		out[s.name] = crushServer{typedServer: typed(s, func(v string) string { return "${" + v + "}" }), EnabledTools: s.tools}
	}
	return marshal(map[string]any{"$schema": "https://charm.land/crush.json", "mcp": out,
		"permissions": map[string]any{"allowed_tools": allowed}})
}
