package harness

import (
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// qwenDoc is the part of a Qwen Code settings.json that bounds MCP tools.
type qwenDoc struct {
	MCPServers map[string]struct {
		IncludeTools *[]string `json:"includeTools"`
		ExcludeTools []string  `json:"excludeTools"`
	} `json:"mcpServers"`
	Permissions struct {
		Allow []string `json:"allow"`
		Deny  []string `json:"deny"`
	} `json:"permissions"`
}

// qwenSettings reads what a Qwen Code settings.json lets the model call
// headless, as mcp__<server>__<tool> names: per mcpServers.<id>,
// includeTools (every tool when absent) less excludeTools and what a
// permissions.deny rule matches, and of those only what a
// permissions.allow rule matches (mcp__*, mcp__<server>,
// mcp__<server>__*, mcp__<server>__<prefix>*, or the exact name): Qwen
// Code runs those without asking. Other allow rules (read_file,
// Bash(git *)) are entries too.
func qwenSettings(path string, known grantcheck.Known) (source, error) {
	var doc qwenDoc
	if err := readJSON(path, &doc); err != nil {
		return source{}, err
	}
	var src source
	matches := func(rules []string, name string) bool {
		for _, r := range rules {
			if qwenMatch(r, name) {
				return true
			}
		}
		return false
	}
	for _, id := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		s := doc.MCPServers[id]
		name := func(tool string) string { return grantcheck.ToolName(grantcheck.NamingClaude, id, tool) }
		tools, whole := serverTools(&src, id, s.IncludeTools, s.ExcludeTools, known, "includeTools", "excludeTools")
		if whole {
			// A name no rule spells out stands for the server's tools.
			if other := name("\x01"); matches(doc.Permissions.Allow, other) && !matches(doc.Permissions.Deny, other) {
				src.entries = append(src.entries, name("*"))
				continue
			}
			for _, r := range doc.Permissions.Allow {
				if strings.HasPrefix(r, name("")) && !strings.Contains(r, "*") && !matches(doc.Permissions.Deny, r) {
					src.entries = append(src.entries, r)
				}
			}
			continue
		}
		for _, t := range tools {
			n := name(t)
			if !slices.Contains(s.ExcludeTools, t) && !matches(doc.Permissions.Deny, n) && matches(doc.Permissions.Allow, n) {
				src.entries = append(src.entries, n)
			}
		}
	}
	for _, r := range doc.Permissions.Allow {
		if !strings.HasPrefix(r, "mcp__") {
			src.entries = append(src.entries, r)
		}
	}
	if len(doc.Permissions.Allow) == 0 && len(doc.MCPServers) > 0 {
		src.notes = append(src.notes, "permissions.allow is empty: headless Qwen Code runs no MCP tool without asking")
	}
	return src, nil
}

// qwenMatch reports whether a Qwen Code permission rule names an MCP tool
// (packages/core/src/permissions/rule-parser.ts, matchesMcpPattern): mcp__* every tool,
// mcp__<server> or mcp__<server>__* a whole server, a trailing * a prefix
// of tool names, otherwise the exact name.
func qwenMatch(rule, name string) bool {
	rule = strings.TrimSpace(rule)
	switch {
	case rule == name:
		return true
	case strings.HasSuffix(rule, "*"):
		return strings.HasPrefix(name, strings.TrimSuffix(rule, "*"))
	case strings.Count(rule, "__") == 1:
		return strings.HasPrefix(name, rule+"__")
	}
	return false
}
