package harness

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// geminiDoc is the part of a Gemini CLI settings.json that bounds MCP
// tools.
type geminiDoc struct {
	MCPServers map[string]struct {
		IncludeTools *[]string `json:"includeTools"`
		ExcludeTools []string  `json:"excludeTools"`
		Trust        bool      `json:"trust"`
	} `json:"mcpServers"`
	Tools struct {
		Allowed []string `json:"allowed"`
		Exclude []string `json:"exclude"`
	} `json:"tools"`
	MCP struct {
		Allowed  *[]string `json:"allowed"`
		Excluded []string  `json:"excluded"`
	} `json:"mcp"`
}

// geminiSettings reads what a Gemini CLI settings.json lets the model call,
// as mcp_<server>_<tool> names: per mcpServers.<id>, includeTools (every
// tool when absent) less excludeTools and what tools.exclude names, none
// for a server mcp.excluded names or mcp.allowed leaves out. A headless
// Gemini CLI (-p) offers only what its policy runs without confirmation,
// so when the settings pre-approve anything (trust, mcp.allowed,
// tools.allowed) only the pre-approved tools count. Other tools.allowed
// entries (run_shell_command(git), read_file) are entries too.
func geminiSettings(path string, known grantcheck.Known) (source, error) {
	var doc geminiDoc
	if err := readJSON(path, &doc); err != nil {
		return source{}, err
	}
	var src source
	approving := len(doc.Tools.Allowed) > 0 || doc.MCP.Allowed != nil
	for _, s := range doc.MCPServers {
		approving = approving || s.Trust
	}
	for _, id := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		s := doc.MCPServers[id]
		switch {
		case slices.Contains(doc.MCP.Excluded, id) || slices.Contains(doc.MCP.Excluded, "*"):
			src.notes = append(src.notes, fmt.Sprintf("%s: mcp.excluded turns the server off", id))
			continue
		case doc.MCP.Allowed != nil && !slices.Contains(*doc.MCP.Allowed, id) && !slices.Contains(*doc.MCP.Allowed, "*"):
			src.notes = append(src.notes, fmt.Sprintf("%s: not in mcp.allowed, so the server is off", id))
			continue
		}
		serverApproved := s.Trust || doc.MCP.Allowed != nil || !approving
		fqn := func(tool string) string { return grantcheck.ToolName(grantcheck.NamingGemini, id, tool) }
		approved := func(tool string) bool {
			if serverApproved {
				return true
			}
			for _, p := range doc.Tools.Allowed {
				if grantcheck.GeminiMatch(p, fqn(tool)) {
					return true
				}
			}
			return false
		}
		excluded := func(tool string) bool {
			if slices.Contains(s.ExcludeTools, tool) {
				return true
			}
			for _, p := range doc.Tools.Exclude {
				if grantcheck.GeminiMatch(p, fqn(tool)) {
					return true
				}
			}
			return false
		}
		tools, whole := serverTools(&src, id, s.IncludeTools, s.ExcludeTools, known, "includeTools", "excludeTools")
		if whole {
			if approved("*") {
				src.entries = append(src.entries, fqn("*"))
				continue
			}
			for _, p := range doc.Tools.Allowed {
				if strings.HasPrefix(p, "mcp_"+id+"_") {
					src.entries = append(src.entries, p)
				}
			}
			continue
		}
		for _, t := range tools {
			if !excluded(t) && approved(t) {
				src.entries = append(src.entries, fqn(t))
			}
		}
	}
	for _, p := range doc.Tools.Allowed {
		if !strings.HasPrefix(p, "mcp_") {
			src.entries = append(src.entries, p)
		}
	}
	if !approving && len(doc.MCPServers) > 0 {
		src.notes = append(src.notes, "nothing in these settings pre-approves a tool (trust, mcp.allowed or tools.allowed): headless Gemini CLI offers the model none of them, an interactive session asks for each")
	}
	return src, nil
}
