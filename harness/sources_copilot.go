package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"

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
		name := func(tool string) string { return grantcheck.ToolName(grantcheck.NamingClaude, id, tool) }
		var tools []string
		switch {
		case s.Tools != nil && !slices.Contains(*s.Tools, "*"):
			tools = *s.Tools
		case known[id] != nil:
			tools = known[id]
		default:
			if len(s.ExcludeTools) > 0 {
				src.problems = append(src.problems, fmt.Sprintf("%s: excludeTools (%s) on a server whose tools are not known: what it leaves cannot be compared; list tools instead", id, strings.Join(s.ExcludeTools, ", ")))
			}
			src.entries = append(src.entries, name("*"))
			continue
		}
		for _, t := range tools {
			if !slices.Contains(s.ExcludeTools, t) {
				src.entries = append(src.entries, name(t))
			}
		}
	}
	return src, nil
}
