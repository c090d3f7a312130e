package harness

import (
	"fmt"
	"maps"
	"slices"

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
		if s.Disabled {
			src.notes = append(src.notes, fmt.Sprintf("%s: disabled", id))
			continue
		}
		listedLessExcluded(&src, grantcheck.NamingGemini, id, s.EnabledTools, s.DisabledTools, known, "enabled_tools", "disabled_tools")
	}
	return src, nil
}
