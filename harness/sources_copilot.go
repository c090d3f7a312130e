package harness

import (
	"maps"
	"slices"

	"github.com/toolgate/toolgate/grantcheck"
)

// copilotSettings reads which MCP tools a GitHub Copilot CLI
// mcp-config.json offers the model, as mcp__<server>__<tool> names: per
// mcpServers.<id>, tools ("*", or absent, for every tool) less
// excludeTools. Copilot CLI names the tools <server>-<tool> to its model,
// which cannot be read back unambiguously (ids hold '-'), so parity
// compares them in the canonical naming.
func copilotSettings(path string, known grantcheck.Known) (source, error) {
	var doc struct {
		MCPServers map[string]struct {
			Tools        *[]string `json:"tools"`
			ExcludeTools []string  `json:"excludeTools"`
		} `json:"mcpServers"`
	}
	if err := readJSON(path, &doc); err != nil {
		return source{}, err
	}
	var src source
	for _, id := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		s := doc.MCPServers[id]
		include := s.Tools
		if include != nil && slices.Contains(*include, "*") {
			include = nil
		}
		listedLessExcluded(&src, grantcheck.NamingClaude, id, include, s.ExcludeTools, known, "tools", "excludeTools")
	}
	return src, nil
}
