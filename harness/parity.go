package harness

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// Verdict is the parity of one agent-provider pair, or of a whole run.
type Verdict string

// The verdicts parity reports (docs/harnesses.md).
const (
	// Green: the harness allowlist and the grant are the same set.
	Green Verdict = "green"
	// Red: they differ either way, the agent holds no grant, a side holds
	// tool:*, or an entry is unrecognised.
	Red Verdict = "red"
	// Unknown: the harness agent failed to load (a stub), or the provider
	// cannot enforce an allowlist. Never read as a wildcard.
	Unknown Verdict = "unknown"
)

// Row is the verdict for one agent and provider, with both sets as
// canonical capabilities and what only one side holds.
type Row struct {
	Agent    string   `json:"agent"`
	Provider string   `json:"provider"`
	Verdict  Verdict  `json:"verdict"`
	Harness  []string `json:"harness"`
	Grant    []string `json:"grant"`
	Delta    Delta    `json:"delta"`
	Note     string   `json:"note"`
}

// Delta is what one side holds and the other does not, after expanding
// surface wildcards whose members are known.
type Delta struct {
	// HarnessOnly is what the harness allows beyond the grant.
	HarnessOnly []string `json:"harness_only"`
	// GrantOnly is what the grant holds that the harness does not allow.
	GrantOnly []string `json:"grant_only"`
}

// Report is a whole parity run. Run is red when any row is red or when no
// row is known (every row unknown, or no rows).
type Report struct {
	Run  Verdict `json:"run"`
	Rows []Row   `json:"rows"`
}

// Comparison is one allowlist against one grant.
type Comparison struct {
	Agent    string
	Provider Harness
	// Entries is the harness allowlist as deployed, in the provider's own
	// naming (Provider.Naming).
	Entries []string
	// Grant is the agent's grant as capabilities (Policy.Capabilities);
	// empty means no grant. A KindAll entry is reported as red.
	Grant []grantcheck.Capability
	// NoGrant explains an empty Grant (e.g. the agent is not declared).
	NoGrant string
	// Known resolves lossy harness names and expands surface wildcards.
	Known grantcheck.Known
	// Notes come from reading the source; Problems too, and they make the
	// row red.
	Notes    []string
	Problems []string
}

// Compare normalises both sides through grantcheck's one mapping and
// returns the verdict. Claude Code skips unanchored allow globs (*,
// mcp__*): they grant nothing there, and the row says so.
func Compare(c Comparison) Row {
	row := Row{Agent: c.Agent, Provider: string(c.Provider), Harness: []string{}, Grant: []string{},
		Delta: Delta{HarnessOnly: []string{}, GrantOnly: []string{}}}
	notes := append([]string(nil), c.Notes...)
	red := append([]string(nil), c.Problems...)
	var hcaps []grantcheck.Capability
	for _, e := range c.Entries {
		if c.Provider == Claude && unanchoredGlob(e) {
			notes = append(notes, fmt.Sprintf("Claude Code skips the unanchored glob %q: it grants nothing", e))
			continue
		}
		caps, err := grantcheck.NormalizeName(c.Provider.Naming(), e, c.Known)
		var u *grantcheck.UnrecognisedError
		switch {
		case errors.As(err, &u):
			red = append(red, fmt.Sprintf("unrecognised entry %q: %s", u.Entry, u.Reason))
			continue
		case err != nil:
			red = append(red, fmt.Sprintf("unrecognised entry %q: %v", e, err))
			continue
		}
		for _, capab := range caps {
			if capab.Kind == grantcheck.KindAll {
				red = append(red, fmt.Sprintf("the allowlist entry %q allows every tool (tool:*)", e))
			}
			hcaps = append(hcaps, capab)
		}
	}
	for _, g := range c.Grant {
		if g.Kind == grantcheck.KindAll {
			red = append(red, "the grant holds tool:*, every tool on every surface")
		}
	}
	if len(c.Grant) == 0 {
		why := c.NoGrant
		if why == "" {
			why = fmt.Sprintf("agent %q holds no grant", c.Agent)
		}
		red = append(red, "no grant: "+why)
	}
	h, g := newCapSet(hcaps, c.Known), newCapSet(c.Grant, c.Known)
	row.Harness, row.Grant = h.listed, g.listed
	row.Delta.HarnessOnly, row.Delta.GrantOnly = h.minus(g), g.minus(h)
	if n := len(row.Delta.HarnessOnly); n > 0 {
		red = append(red, fmt.Sprintf("the harness allows %d beyond the grant: %s", n, strings.Join(row.Delta.HarnessOnly, ", ")))
	}
	if n := len(row.Delta.GrantOnly); n > 0 {
		red = append(red, fmt.Sprintf("the harness does not allow %d the grant holds: %s", n, strings.Join(row.Delta.GrantOnly, ", ")))
	}
	row.Verdict = Green
	if len(red) > 0 {
		row.Verdict = Red
	}
	row.Note = strings.Join(append(red, notes...), "; ")
	return row
}

// unanchoredGlob reports an entry Claude Code does not read as a rule: a
// * anywhere but the trailing __* of mcp__<server>__* or inside Bash(…).
func unanchoredGlob(e string) bool {
	if !strings.Contains(e, "*") || strings.HasPrefix(e, "Bash(") {
		return false
	}
	if s, ok := strings.CutSuffix(e, "__*"); ok {
		if surface, ok := strings.CutPrefix(s, "mcp__"); ok && grantcheck.ValidName(surface) && !strings.Contains(surface, "__") {
			return false
		}
	}
	return true
}

// capSet is one side of a comparison: exact tools, whole surfaces whose
// members are unknown, and whether it holds tool:*.
type capSet struct {
	all    bool
	exact  map[string]bool // "surface\x00member"
	wild   map[string]bool
	listed []string
}

func newCapSet(caps []grantcheck.Capability, known grantcheck.Known) *capSet {
	s := &capSet{exact: map[string]bool{}, wild: map[string]bool{}}
	seen := map[string]bool{}
	for _, c := range caps {
		if str := c.String(); !seen[str] {
			seen[str] = true
			s.listed = append(s.listed, str)
		}
		switch c.Kind {
		case grantcheck.KindAll:
			s.all = true
		case grantcheck.KindTool:
			s.exact[c.Surface+"\x00"+c.Member] = true
		default: // a surface, pack or server wildcard
			if ms := known[c.Surface]; ms != nil {
				for _, m := range ms {
					s.exact[c.Surface+"\x00"+m] = true
				}
			} else {
				s.wild[c.Surface] = true
			}
		}
	}
	sort.Strings(s.listed)
	if s.listed == nil {
		s.listed = []string{}
	}
	return s
}

// minus lists what s holds that o does not cover, as capabilities.
func (s *capSet) minus(o *capSet) []string {
	out := []string{}
	if s.all && !o.all {
		out = append(out, "tool:*")
	}
	if o.all {
		return out
	}
	for k := range s.exact {
		surface, member, _ := strings.Cut(k, "\x00")
		if !o.exact[k] && !o.wild[surface] {
			out = append(out, grantcheck.Tool(surface, member).String())
		}
	}
	for surface := range s.wild {
		if !o.wild[surface] {
			out = append(out, grantcheck.Capability{Kind: grantcheck.KindSurface, Surface: surface}.String())
		}
	}
	sort.Strings(out)
	return out
}

// KnownOf lists a policy's surfaces with their members: a pack's
// commands, an MCP server's listed tools, or the tools the workspace
// declares for it; nil for a server of which nothing is known.
func KnownOf(p *grantcheck.Policy) grantcheck.Known {
	known := grantcheck.Known{}
	for _, s := range p.Summary().Surfaces {
		known[s.ID] = nil
		if s.Kind == grantcheck.KindPackSurface || s.Listed || len(s.Members) > 0 {
			names := make([]string, 0, len(s.Members))
			for _, m := range s.Members {
				names = append(names, m.Name)
			}
			known[s.ID] = names
		}
	}
	return known
}

// enforces reports whether a provider honours a per-tool allowlist that
// toolgate can read.
func enforces(p Harness) bool {
	return p == Claude || p == Codex || p == Gemini || p == OpenCode || p == Qwen || p == Copilot || p == Crush
}

// Check compares every row of spec with the grants of p.
func Check(p *grantcheck.Policy, spec *Spec) Report {
	known := KnownOf(p)
	rep := Report{Rows: []Row{}}
	for _, r := range spec.Rows {
		rep.Rows = append(rep.Rows, checkRow(p, known, r))
	}
	rep.Run = runVerdict(rep.Rows)
	return rep
}

func runVerdict(rows []Row) Verdict {
	known := false
	for _, r := range rows {
		switch r.Verdict {
		case Red:
			return Red
		case Green:
			known = true
		}
	}
	if !known {
		return Red
	}
	return Green
}

func checkRow(p *grantcheck.Policy, known grantcheck.Known, r *SpecRow) Row {
	grant, gerr := p.Capabilities(r.Agent)
	unknown := func(note string) Row {
		row := Row{Agent: r.Agent, Provider: string(r.Provider), Verdict: Unknown, Harness: []string{},
			Grant: newCapSet(grant, nil).listed, Delta: Delta{HarnessOnly: []string{}, GrantOnly: []string{}}, Note: note}
		return row
	}
	if r.Stub != nil {
		return unknown("the harness could not load this agent's definition, so its allowlist is unknown: " + r.Stub.LoadError)
	}
	if !enforces(r.Provider) {
		return unknown(fmt.Sprintf("%s cannot enforce a per-tool allowlist toolgate can read; toolgate's grant is the only bound", r.Provider))
	}
	src, ok, err := readSource(r, known)
	if !ok {
		hint := "allowed_tools"
		switch r.Provider {
		case Claude:
			hint = "allowed_tools, argv or settings"
		case Codex:
			hint = "allowed_tools or config_toml (enabled_tools)"
		case Gemini:
			hint = "allowed_tools or settings (includeTools, tools.allowed)"
		case OpenCode:
			hint = "allowed_tools or settings (opencode.json: tools, permission)"
		case Qwen:
			hint = "allowed_tools or settings (includeTools, permissions.allow)"
		case Crush:
			hint = "allowed_tools (mcp_<server>_<tool>) or settings (crush.json: enabled_tools)"
		case Copilot:
			hint = "allowed_tools (mcp__<server>__<tool>) or settings (mcp-config.json: tools)"
		}
		return unknown(fmt.Sprintf("no enforceable allowlist given for %s; add %s", r.Provider, hint))
	}
	if err != nil {
		row := unknown("cannot read the allowlist: " + err.Error())
		row.Verdict = Red
		return row
	}
	c := Comparison{Agent: r.Agent, Provider: r.Provider, Entries: src.entries, Grant: grant, Known: known,
		Notes: src.notes, Problems: src.problems}
	if gerr != nil {
		c.NoGrant = fmt.Sprintf("agent %q is not declared in the workspace", r.Agent)
	}
	return Compare(c)
}
