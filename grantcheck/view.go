package grantcheck

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/tiers"
	"github.com/toolgate/toolgate/workspace"
)

// ToolView is one tool as an agent may see it in tools/list.
type ToolView struct {
	Surface     string           `json:"surface"`
	Name        string           `json:"name"`
	Description string           `json:"description,omitempty"`
	Effects     workspace.Effect `json:"effects"`
	Tier        workspace.Tier   `json:"tier"`
	// Outcome is what a call with valid arguments gets: the tier's verdict,
	// or deny when the agent lacks a required scope.
	Outcome       Outcome  `json:"outcome"`
	Grant         string   `json:"grant"`
	MissingScopes []string `json:"missing_scopes,omitempty"`
	// InputSchema is the tool's schema narrowed by the grant's
	// param_constraints; nil when the schema is unknown (server not listed).
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// StructuredOutput is true for a pack command with output: {parse:
	// json}: its results carry structuredContent, so the tool declares an
	// outputSchema (docs/packs.md).
	StructuredOutput bool `json:"-"`
}

// Tools lists the tools agent may call on surface ("" for every surface),
// in workspace (or listing) order: only granted ones, so a tools/list never
// shows what a call would refuse as unknown. Unknown agents see nothing.
func (p *Policy) Tools(agentID, surfaceID string) []ToolView {
	ag := p.agents[agentID]
	if ag == nil {
		return nil
	}
	var out []ToolView
	for _, sid := range p.order {
		if surfaceID != "" && sid != surfaceID {
			continue
		}
		s := p.surfaces[sid]
		for _, name := range s.order {
			m, g, _ := p.lookup(ag, sid, name)
			if g == nil || m == nil {
				continue
			}
			out = append(out, p.view(ag, s, m, g))
		}
	}
	return out
}

func (p *Policy) view(ag *agent, s *surface, m *member, g *grant) ToolView {
	v := ToolView{Surface: s.id, Name: m.name, Description: m.description, Effects: m.effects, Tier: m.tier,
		Outcome: tiers.OutcomeFor(m.tier, m.effects), Grant: g.text, StructuredOutput: m.structured}
	for _, sc := range m.scopes {
		if !ag.scopes[sc] {
			v.MissingScopes = append(v.MissingScopes, sc)
		}
	}
	if len(v.MissingScopes) > 0 || m.schemaErr != nil {
		v.Outcome = Deny
	}
	if m.schema != nil {
		schema, err := narrowSchema(m.schema.raw, g.constraints)
		if err != nil {
			v.Outcome = Deny
		}
		v.InputSchema = schema
	}
	return v
}

// Summary is the whole policy for people: every surface with its members,
// and every agent with the tools it may call. `toolgate check` prints it.
type Summary struct {
	Surfaces []SurfaceSummary `json:"surfaces"`
	Agents   []AgentSummary   `json:"agents"`
}

// SurfaceSummary is one surface. For an MCP server not yet listed, Members
// are only the tools the workspace names and Listed is false.
type SurfaceSummary struct {
	ID      string          `json:"id"`
	Kind    SurfaceKind     `json:"kind"`
	Listed  bool            `json:"listed"`
	Members []MemberSummary `json:"members"`
}

// MemberSummary is one member's effects and tier.
type MemberSummary struct {
	Name    string           `json:"name"`
	Effects workspace.Effect `json:"effects"`
	Tier    workspace.Tier   `json:"tier"`
}

// AgentSummary is one agent: its scopes and the exact set of tools it may
// call, with the decision a valid call gets. Unenumerated lists the server
// grants that cover nothing yet because the server's tools are not listed.
type AgentSummary struct {
	ID           string      `json:"id"`
	Scopes       []string    `json:"scopes"`
	Tools        []AgentTool `json:"tools"`
	Unenumerated []string    `json:"unenumerated,omitempty"`
}

// AgentTool is one tool an agent may call.
type AgentTool struct {
	Tool          string           `json:"tool"`
	Effects       workspace.Effect `json:"effects"`
	Tier          workspace.Tier   `json:"tier"`
	Decision      Outcome          `json:"decision"`
	Grant         string           `json:"grant"`
	MissingScopes []string         `json:"missing_scopes,omitempty"`
	// Refusal says why a granted tool is refused past the policy (its
	// definition is not the pinned one); "" otherwise.
	Refusal string `json:"refusal,omitempty"`
	// ApprovedBy are the approval rules that may approve its calls without
	// a human (within their argument bounds).
	ApprovedBy []string `json:"approved_by,omitempty"`
}

// Summary describes every surface and agent, in workspace order.
func (p *Policy) Summary() Summary {
	sum := Summary{Surfaces: []SurfaceSummary{}, Agents: []AgentSummary{}}
	for _, sid := range p.order {
		s := p.surfaces[sid]
		ss := SurfaceSummary{ID: s.id, Kind: s.kind, Listed: s.listed, Members: []MemberSummary{}}
		for _, name := range s.order {
			m := s.members[name]
			ss.Members = append(ss.Members, MemberSummary{Name: name, Effects: m.effects, Tier: m.tier})
		}
		sum.Surfaces = append(sum.Surfaces, ss)
	}
	for _, aid := range p.agentOrder {
		ag := p.agents[aid]
		as := AgentSummary{ID: aid, Scopes: nonNilStrings(ag.scopeList), Tools: []AgentTool{}}
		for _, v := range p.Tools(aid, "") {
			as.Tools = append(as.Tools, AgentTool{Tool: v.Surface + ":" + v.Name, Effects: v.Effects, Tier: v.Tier,
				Decision: v.Outcome, Grant: v.Grant, MissingScopes: v.MissingScopes})
		}
		for _, g := range ag.grants {
			if g.cap.Kind == KindServer && !p.surfaces[g.cap.Surface].listed {
				as.Unenumerated = append(as.Unenumerated, g.text)
			}
		}
		sum.Agents = append(sum.Agents, as)
	}
	return sum
}

// Capabilities is agent's grant as canonical capabilities, for comparing
// with a harness allowlist (parity, mcp-config): exact grants and aliases
// as tool:<s>:<m>, a pack grant expanded to its read commands, a server
// grant as tool:<s>:* (every tool it lists). Duplicates are removed.
func (p *Policy) Capabilities(agentID string) ([]Capability, error) {
	ag := p.agents[agentID]
	if ag == nil {
		return nil, fmt.Errorf("no agent %q is declared", agentID)
	}
	seen := map[Capability]bool{}
	var out []Capability
	add := func(c Capability) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, g := range ag.grants {
		switch g.cap.Kind {
		case KindTool:
			add(g.cap)
		case KindServer:
			add(Capability{Kind: KindSurface, Surface: g.cap.Surface})
		case KindPack:
			s := p.surfaces[g.cap.Surface]
			for _, name := range s.order {
				if s.members[name].effects == workspace.EffectRead {
					add(Tool(s.id, name))
				}
			}
		}
	}
	return out, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
