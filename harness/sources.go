package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// source is a deployed allowlist as read from where a SpecRow says it is:
// raw harness entries in the provider's own naming (mcp__<s>__<m>, Read,
// Bash(git:*); mcp_<s>_<m>; <s>_<m> …), notes on what was read and what
// was left out, and problems: what makes the allowlist impossible to
// compare, reported red.
type source struct {
	entries  []string
	notes    []string
	problems []string
}

// readSource reads r's allowlist, resolving whole servers against known.
// ok is false when the row names no source.
func readSource(r *SpecRow, known grantcheck.Known) (src source, ok bool, err error) {
	switch {
	case r.HasAllowedTools:
		return source{entries: r.AllowedTools}, true, nil
	case r.Argv != nil:
		entries, found := AllowedToolsFromArgv(r.Argv)
		src = source{entries: entries}
		if !found {
			src.notes = append(src.notes, "the argv has no --allowed-tools/--allowedTools, so the harness pre-approves nothing")
		}
		return src, true, nil
	case r.Settings != "" && r.Provider == Gemini:
		src, err = geminiSettings(r.Settings, known)
		return src, true, err
	case r.Settings != "" && r.Provider == Qwen:
		src, err = qwenSettings(r.Settings, known)
		return src, true, err
	case r.Settings != "" && r.Provider == Copilot:
		src, err = copilotSettings(r.Settings, known)
		return src, true, err
	case r.Settings != "" && r.Provider == Crush:
		src, err = crushSettings(r.Settings, known)
		return src, true, err
	case r.Settings != "" && r.Provider == OpenCode:
		src, err = opencodeSettings(r.Settings, known)
		return src, true, err
	case r.Settings != "":
		src, err = claudeSettings(r.Settings)
		return src, true, err
	case r.ConfigTOML != "":
		src, err = codexConfigTOML(r.ConfigTOML, known)
		return src, true, err
	}
	return source{}, false, nil
}

// AllowedToolsFromArgv collects the entries of every --allowed-tools or
// --allowedTools in a Claude Code command line (also the --flag=value
// form). The flag takes one or more following arguments, up to the next
// one starting with "-"; each is split on commas and spaces outside
// parentheses, so Bash(git log:*) stays one entry. found is false when the
// flag is absent.
func AllowedToolsFromArgv(argv []string) (entries []string, found bool) {
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if name, val, eq := strings.Cut(a, "="); eq && (name == "--allowed-tools" || name == "--allowedTools") {
			found = true
			entries = append(entries, splitEntries(val)...)
			continue
		}
		if a != "--allowed-tools" && a != "--allowedTools" {
			continue
		}
		found = true
		for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
			i++
			entries = append(entries, splitEntries(argv[i])...)
		}
	}
	return entries, found
}

// splitEntries splits one argument on commas and whitespace that stand
// outside parentheses.
func splitEntries(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if e := strings.TrimSpace(s[start:end]); e != "" {
			out = append(out, e)
		}
	}
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ',' || r == ' ' || r == '\t' || r == '\n'):
			flush(i)
			start = i + 1
		}
	}
	flush(len(s))
	return out
}

// claudeSettings reads permissions.allow of a Claude Code settings.json.
func claudeSettings(path string) (source, error) {
	var doc struct {
		Permissions struct {
			Allow []string `json:"allow"`
			Deny  []string `json:"deny"`
		} `json:"permissions"`
	}
	if err := readJSON(path, &doc); err != nil {
		return source{}, err
	}
	src := source{entries: doc.Permissions.Allow}
	if doc.Permissions.Allow == nil {
		src.notes = append(src.notes, "settings have no permissions.allow, so the harness pre-approves nothing")
	}
	if len(doc.Permissions.Deny) > 0 {
		src.notes = append(src.notes, fmt.Sprintf("permissions.deny (%s) is not subtracted: parity compares what is allowed", strings.Join(doc.Permissions.Deny, ", ")))
	}
	return src, nil
}

// serverEntries are the allowlist entries of one configured server in
// naming n: its listed tools, or the whole server when no list is given.
func serverEntries(n grantcheck.Naming, id string, tools *[]string) []string {
	if tools == nil {
		return []string{grantcheck.ToolName(n, id, "*")}
	}
	out := make([]string, 0, len(*tools))
	for _, t := range *tools {
		out = append(out, grantcheck.ToolName(n, id, t))
	}
	return out
}

// serverTools resolves which tools of server id a per-server list names:
// include as written, or, when it is absent, every tool known for the
// server. whole is true when neither says which tools the server has; it
// is then compared as a whole, and an exclude list on it (excludeKey) is a
// problem, since what it leaves cannot be compared.
func serverTools(src *source, id string, include *[]string, exclude []string, known grantcheck.Known, includeKey, excludeKey string) (tools []string, whole bool) {
	switch {
	case include != nil:
		return *include, false
	case known[id] != nil:
		return known[id], false
	}
	if len(exclude) > 0 {
		src.problems = append(src.problems, fmt.Sprintf("%s: %s (%s) on a server whose tools are not known: what it leaves cannot be compared; list %s instead", id, excludeKey, strings.Join(exclude, ", "), includeKey))
	}
	return nil, true
}

// listedLessExcluded adds to src, in naming n, server id's tools less
// those exclude names, or the whole server.
func listedLessExcluded(src *source, n grantcheck.Naming, id string, include *[]string, exclude []string, known grantcheck.Known, includeKey, excludeKey string) {
	tools, whole := serverTools(src, id, include, exclude, known, includeKey, excludeKey)
	if whole {
		src.entries = append(src.entries, grantcheck.ToolName(n, id, "*"))
		return
	}
	for _, t := range tools {
		if !slices.Contains(exclude, t) {
			src.entries = append(src.entries, grantcheck.ToolName(n, id, t))
		}
	}
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
