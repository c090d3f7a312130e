package harness

import (
	"fmt"
	"regexp"
	"sync"

	"github.com/toolgate/toolgate/grantcheck"
)

// nameRE is what a harness accepts as a whole tool name, prefix included.
// It is compiled when first used: {1,64} is ~1,000 allocations that every
// toolgate process would pay at start.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// AllowedTools derives Claude Code's --allowed-tools entries from agent's
// grant: one mcp__<surface>__<tool> per granted tool (a pack grant expanded
// to its read commands) and mcp__<server> for a server granted in bulk. The
// list is the grant, so the harness and toolgate cannot drift apart.
func AllowedTools(p *grantcheck.Policy, agent string) ([]string, error) {
	caps, err := p.Capabilities(agent)
	if err != nil {
		return nil, err
	}
	if len(caps) == 0 {
		return nil, fmt.Errorf("agent %q holds no grant, so no allowlist can be derived; grant it tools in the workspace", agent)
	}
	out := make([]string, 0, len(caps))
	for _, c := range caps {
		e, err := grantcheck.HarnessEntry(c)
		if err != nil {
			return nil, fmt.Errorf("agent %q: %w; rename the surface or tool so that mcp__<surface>__<tool> fits %s", agent, err, nameRE())
		}
		out = append(out, e)
	}
	return out, nil
}

// Entry is one MCP server entry of a harness config: a surface the agent
// holds something on. Tools are the member names granted, nil when a
// server is granted in bulk (every tool it lists).
type Entry struct {
	Surface string
	Tools   []string
}

// Entries lists the surfaces agent holds tools on, in workspace order, each
// checked so that every name the harness will show (mcp__<surface>__<tool>)
// fits ^[A-Za-z0-9_-]{1,64}$.
func Entries(p *grantcheck.Policy, agent string) ([]Entry, error) {
	caps, err := p.Capabilities(agent)
	if err != nil {
		return nil, err
	}
	bulk := map[string]bool{}
	for _, c := range caps {
		if c.Kind == grantcheck.KindSurface {
			bulk[c.Surface] = true
		}
	}
	var out []Entry
	for _, s := range p.Surfaces() {
		views := p.Tools(agent, s)
		if len(views) == 0 && !bulk[s] {
			continue
		}
		if _, err := grantcheck.HarnessEntry(grantcheck.Capability{Kind: grantcheck.KindSurface, Surface: s}); err != nil {
			return nil, fmt.Errorf("surface %q cannot be a harness MCP server name: %w", s, err)
		}
		e := Entry{Surface: s}
		for _, v := range views {
			name := "mcp__" + s + "__" + v.Name
			if !nameRE().MatchString(name) {
				return nil, fmt.Errorf("tool %s:%s: the harness would name it %q, which does not fit %s (at most 64 letters, digits, '_' or '-'); shorten the surface id or the tool name", s, v.Name, name, nameRE())
			}
			if !bulk[s] {
				e.Tools = append(e.Tools, v.Name)
			}
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("agent %q holds no tool on any surface, so there is nothing to configure; grant it tools in the workspace", agent)
	}
	return out, nil
}

// ClaudeSettings renders a Claude Code settings.json whose
// permissions.allow is list (from AllowedTools).
func ClaudeSettings(list []string) ([]byte, error) {
	return marshal(map[string]any{"permissions": map[string]any{"allow": list}})
}
