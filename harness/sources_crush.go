package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// crushSettings reads which MCP tools a Crush crush.json offers the model,
// as mcp_<server>_<tool> names: per mcp.<id> not disabled, enabled_tools
// (every tool when absent) less disabled_tools. permissions.allowed_tools
// only decides what runs without a prompt, so it is not compared.
func crushSettings(path string, known grantcheck.Known) (source, error) {
	var doc struct {
		MCP map[string]struct {
			EnabledTools  *[]string `json:"enabled_tools"`
			DisabledTools []string  `json:"disabled_tools"`
			Disabled      bool      `json:"disabled"`
		} `json:"mcp"`
	}
	if err := readJSON(path, &doc); err != nil {
		return source{}, err
	}
	var src source
	for _, id := range slices.Sorted(maps.Keys(doc.MCP)) {
		s := doc.MCP[id]
		name := func(tool string) string { return grantcheck.ToolName(grantcheck.NamingGemini, id, tool) }
		if s.Disabled {
			src.notes = append(src.notes, fmt.Sprintf("%s: disabled", id))
			continue
		}
		var tools []string
		switch {
		case s.EnabledTools != nil:
			tools = *s.EnabledTools
		case known[id] != nil:
			tools = known[id]
		default:
			if len(s.DisabledTools) > 0 {
				src.problems = append(src.problems, fmt.Sprintf("%s: disabled_tools (%s) on a server whose tools are not known: what it leaves cannot be compared; list enabled_tools instead", id, strings.Join(s.DisabledTools, ", ")))
			}
			src.entries = append(src.entries, name("*"))
			continue
		}
		for _, t := range tools {
			if !slices.Contains(s.DisabledTools, t) {
				src.entries = append(src.entries, name(t))
			}
		}
	}
	return src, nil
}
