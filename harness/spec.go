package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/workspace"
)

// Spec is a HARNESS.yaml: for each agent and provider, where the
// harness's deployed allowlist comes from.
type Spec struct {
	Path string
	Rows []*SpecRow
}

// SpecRow is one agent-provider pair of a Spec. At most one source is set;
// none means the provider was given no allowlist to check.
type SpecRow struct {
	Pos      workspace.Pos
	Agent    string
	Provider Harness
	// AllowedTools is a literal allowlist; HasAllowedTools tells an empty
	// list (allows nothing) from an absent one.
	AllowedTools    []string
	HasAllowedTools bool
	// Argv is a full command line to read --allowed-tools/--allowedTools from.
	Argv []string
	// Settings is the harness's JSON settings (Claude Code settings.json:
	// permissions.allow; Gemini CLI settings.json: mcpServers.*.includeTools,
	// tools.allowed; OpenCode opencode.json: tools, permission; Qwen Code
	// settings.json: mcpServers.*.includeTools, permissions.allow; Copilot
	// CLI mcp-config.json: mcpServers.*.tools; Crush crush.json:
	// mcp.*.enabled_tools), resolved
	// against the spec's directory.
	Settings string
	// ConfigTOML is a Codex config.toml (mcp_servers.*.enabled_tools).
	ConfigTOML string
	// Stub marks an agent definition that failed to load in the harness.
	Stub *Stub
}

// Stub is an agent definition the harness could not load, with its error.
type Stub struct {
	LoadError string
}

// LoadSpec reads a HARNESS.yaml strictly: unknown fields, a missing agent
// or provider, an unknown provider, two sources in one row, or a source
// the provider does not read are errors at FILE:LINE:COL, all reported at
// once as a workspace.ErrorList. getenv expands a leading ~/ in paths.
func LoadSpec(path string, getenv func(string) string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("harness file: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, workspace.ErrorList{workspace.Errorf(workspace.Pos{File: path}, "%v", err)}
	}
	l := &specLoader{file: path, dir: filepath.Dir(path), getenv: getenv}
	spec := &Spec{Path: path}
	if len(doc.Content) == 0 {
		l.errorf(&doc, "the file is empty; write agents: [{agent: ID, provider: claude, allowed_tools: [...]}]")
		return nil, l.errs.Err()
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.errorf(root, "expected a mapping with an agents: list")
		return nil, l.errs.Err()
	}
	var agents *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "agents":
			agents = v
		default:
			l.errorf(k, "unknown field %q; the file has one field, agents", k.Value)
		}
	}
	if agents == nil {
		l.errorf(root, "no agents: list; write agents: [{agent: ID, provider: claude, allowed_tools: [...]}]")
	} else if agents.Kind != yaml.SequenceNode {
		l.errorf(agents, "agents must be a list")
	} else {
		seen := map[string]workspace.Pos{}
		for _, n := range agents.Content {
			r := l.row(n)
			if r == nil {
				continue
			}
			key := r.Agent + "\x00" + string(r.Provider)
			if prev, dup := seen[key]; dup {
				l.errorf(n, "agent %q with provider %s is listed twice (first at %s); keep one", r.Agent, r.Provider, prev)
				continue
			}
			seen[key] = r.Pos
			spec.Rows = append(spec.Rows, r)
		}
	}
	if err := l.errs.Err(); err != nil {
		return nil, err
	}
	return spec, nil
}

type specLoader struct {
	file, dir string
	getenv    func(string) string
	errs      workspace.ErrorList
}

func (l *specLoader) pos(n *yaml.Node) workspace.Pos {
	return workspace.Pos{File: l.file, Line: n.Line, Col: n.Column}
}

func (l *specLoader) errorf(n *yaml.Node, format string, args ...any) {
	l.errs = append(l.errs, workspace.Errorf(l.pos(n), format, args...))
}

func (l *specLoader) row(n *yaml.Node) *SpecRow {
	if n.Kind != yaml.MappingNode {
		l.errorf(n, "each entry of agents is a mapping: {agent: ID, provider: NAME, <source>}")
		return nil
	}
	r := &SpecRow{Pos: l.pos(n)}
	ok := true
	var sources []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "agent":
			r.Agent, ok = l.str(v, ok)
		case "provider":
			var p string
			p, ok = l.str(v, ok)
			if h, err := ParseHarness(p); err != nil && p != "" {
				l.errorf(v, "provider: %v", err)
				ok = false
			} else {
				r.Provider = h
			}
		case "allowed_tools":
			r.AllowedTools, ok = l.list(v, ok)
			r.HasAllowedTools = true
			sources = append(sources, k.Value)
		case "argv":
			r.Argv, ok = l.list(v, ok)
			sources = append(sources, k.Value)
		case "settings":
			var p string
			p, ok = l.str(v, ok)
			r.Settings = l.path(p)
			sources = append(sources, k.Value)
		case "config_toml":
			var p string
			p, ok = l.str(v, ok)
			r.ConfigTOML = l.path(p)
			sources = append(sources, k.Value)
		case "stub":
			r.Stub, ok = l.stub(v, ok)
			sources = append(sources, k.Value)
		default:
			l.errorf(k, "unknown field %q; a row has agent, provider and one of allowed_tools, argv, settings, config_toml, stub", k.Value)
			ok = false
		}
	}
	if r.Agent == "" {
		l.errorf(n, "agent: is required (the workspace agent id this harness runs as)")
		ok = false
	}
	if r.Provider == "" {
		l.errorf(n, "provider: is required (one of %s)", harnessList())
		ok = false
	}
	if len(sources) > 1 {
		l.errorf(n, "give one allowlist source per row, not %s", strings.Join(sources, " and "))
		ok = false
	}
	if len(sources) == 1 && r.Provider != "" {
		if why := sourceMismatch(r.Provider, sources[0]); why != "" {
			l.errorf(n, "%s", why)
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return r
}

// sourceMismatch says why provider does not read source, or "".
func sourceMismatch(provider Harness, source string) string {
	switch source {
	case "argv":
		if provider != Claude {
			return fmt.Sprintf("argv: --allowed-tools is Claude Code's flag; for %s give allowed_tools%s", provider, configHint(provider))
		}
	case "settings":
		if provider != Claude && provider != Gemini && provider != OpenCode && provider != Qwen && provider != Copilot && provider != Crush {
			return fmt.Sprintf("settings: is read for claude (permissions.allow), gemini (includeTools, tools.allowed), opencode (opencode.json tools, permission), qwen (includeTools, permissions.allow), copilot (mcp-config.json tools) and crush (crush.json enabled_tools), not %s", provider)
		}
	case "config_toml":
		if provider != Codex {
			return fmt.Sprintf("config_toml: is Codex's config; for %s give allowed_tools%s", provider, configHint(provider))
		}
	}
	return ""
}

func configHint(p Harness) string {
	switch p {
	case Codex:
		return " or config_toml"
	case Gemini, OpenCode, Qwen, Copilot, Crush:
		return " or settings"
	}
	return ""
}

func (l *specLoader) str(n *yaml.Node, ok bool) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		l.errorf(n, "expected a string")
		return "", false
	}
	return n.Value, ok
}

func (l *specLoader) list(n *yaml.Node, ok bool) ([]string, bool) {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, "expected a list of strings")
		return nil, false
	}
	out := []string{}
	for _, item := range n.Content {
		if item.Kind != yaml.ScalarNode || item.Tag == "!!null" {
			l.errorf(item, "expected a string")
			ok = false
			continue
		}
		out = append(out, item.Value)
	}
	return out, ok
}

func (l *specLoader) stub(n *yaml.Node, ok bool) (*Stub, bool) {
	if n.Kind != yaml.MappingNode {
		l.errorf(n, "stub is a mapping: {load_error: MESSAGE}")
		return nil, false
	}
	s := &Stub{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value != "load_error" {
			l.errorf(k, "unknown field %q in stub; it has one field, load_error", k.Value)
			ok = false
			continue
		}
		s.LoadError, ok = l.str(v, ok)
	}
	if s.LoadError == "" {
		l.errorf(n, "stub: load_error is required (what the harness said when the agent definition failed to load)")
		ok = false
	}
	return s, ok
}

// path resolves p against the spec's directory, expanding a leading ~/.
func (l *specLoader) path(p string) string {
	if p == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok && l.getenv != nil {
		if home := l.getenv("HOME"); home != "" {
			return filepath.Join(home, rest)
		}
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(l.dir, p)
}
