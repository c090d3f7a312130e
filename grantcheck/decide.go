package grantcheck

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/tiers"
	"github.com/toolgate/toolgate/workspace"
)

// Stage is one step of the call pipeline of docs/grants.md that grantcheck
// runs; a decision names the stage that ended it.
type Stage string

// The stages, in the order they run.
const (
	StageIdentity    Stage = "identity"
	StageGrant       Stage = "grant"
	StageScopes      Stage = "scopes"
	StageSchema      Stage = "schema"
	StageConstraints Stage = "constraints"
	StageTier        Stage = "tier"
)

// Stages lists the pipeline stages in order.
func Stages() []Stage {
	return []Stage{StageIdentity, StageGrant, StageScopes, StageSchema, StageConstraints, StageTier}
}

// Decision is the verdict on one call and why. Tier, Effects and Grant are
// filled once the tool is known to be granted, never before, so a refusal
// reveals nothing about tools the agent may not use.
type Decision struct {
	Outcome Outcome `json:"decision"`
	// Reason is human-readable; for a deny it is what follows "DENIED: ".
	Reason string `json:"reason"`
	// Stage is the pipeline step that decided.
	Stage   Stage            `json:"stage"`
	Tier    workspace.Tier   `json:"tier"`
	Effects workspace.Effect `json:"effects"`
	// Grant is the matched grant as written in the workspace.
	Grant string `json:"grant"`
	// MissingScopes are the required scopes the agent lacks (stage scopes).
	MissingScopes []string `json:"missing_scopes"`
}

// UnknownToolReason is the refusal for a tool that does not exist and for
// one that exists but is not granted: the same text, so a denial never
// reveals what exists. Callers refusing an unknown name use it too.
func UnknownToolReason(surface, member string) string {
	return fmt.Sprintf("unknown tool %q", surface+":"+member)
}

// Decide runs the pipeline for one call of surface:member by agent with
// args (decoded JSON: numbers float64 or json.Number). It does not execute
// anything and does not check `requires` (the pack runner does). Anything
// unknown denies.
func (p *Policy) Decide(agentID, surfaceID, memberName string, args map[string]any) Decision {
	return p.decide(agentID, surfaceID, memberName, args, nil)
}

// Step is one pipeline stage as Explain saw it.
type Step struct {
	Stage Stage `json:"stage"`
	// Status is pass, fail, or skipped (an earlier stage ended the call).
	Status string `json:"status"`
	Detail string `json:"detail,omitempty"`
}

// Explanation is a decision with every stage's result, for operators
// (toolgate explain). Its details may name what exists; never send them to
// an agent.
type Explanation struct {
	Decision
	Steps []Step `json:"steps"`
}

// Explain is Decide with a record of each stage, for `toolgate explain`.
func (p *Policy) Explain(agentID, surfaceID, memberName string, args map[string]any) Explanation {
	tr := &trace{}
	d := p.decide(agentID, surfaceID, memberName, args, tr)
	for _, st := range Stages()[len(tr.steps):] {
		tr.steps = append(tr.steps, Step{Stage: st, Status: "skipped"})
	}
	return Explanation{Decision: d, Steps: tr.steps}
}

// trace records stages for Explain; a nil trace records nothing, so Decide
// pays for no detail strings.
type trace struct{ steps []Step }

func (t *trace) add(st Stage, ok bool, format string, args ...any) {
	status := "pass"
	if !ok {
		status = "fail"
	}
	t.steps = append(t.steps, Step{Stage: st, Status: status, Detail: fmt.Sprintf(format, args...)})
}

func deny(st Stage, reason string) Decision {
	return Decision{Outcome: Deny, Stage: st, Reason: reason}
}

func (p *Policy) decide(agentID, surfaceID, memberName string, args map[string]any, tr *trace) Decision {
	ag := p.agents[agentID]
	if ag == nil {
		if tr != nil {
			tr.add(StageIdentity, false, "no agent %q is declared; agents are: %s", agentID, strings.Join(p.agentOrder, ", "))
		}
		return deny(StageIdentity, fmt.Sprintf("unknown agent %q", agentID))
	}
	if tr != nil {
		tr.add(StageIdentity, true, "agent %q is declared (scopes: %s)", agentID, listOrNone(ag.scopeList))
	}
	m, g, miss := p.lookup(ag, surfaceID, memberName)
	if g == nil || m == nil {
		if tr != nil {
			tr.add(StageGrant, false, "%s; the agent is told the tool is unknown", miss.explain(p, ag, surfaceID, memberName))
		}
		return deny(StageGrant, UnknownToolReason(surfaceID, memberName))
	}
	if tr != nil {
		tr.add(StageGrant, true, "%s", grantDetail(p.surfaces[surfaceID], m, g))
	}
	d := Decision{Tier: m.tier, Effects: m.effects, Grant: g.text}

	for _, sc := range m.scopes {
		if !ag.scopes[sc] {
			d.MissingScopes = append(d.MissingScopes, sc)
		}
	}
	if len(d.MissingScopes) > 0 {
		d.Outcome, d.Stage = Deny, StageScopes
		d.Reason = fmt.Sprintf("missing scopes: %s (the tool requires %s)", strings.Join(d.MissingScopes, ", "), strings.Join(m.scopes, ", "))
		if tr != nil {
			tr.add(StageScopes, false, "%s", d.Reason)
		}
		return d
	}
	if tr != nil {
		tr.add(StageScopes, true, "requires %s", listOrNone(m.scopes))
	}

	switch {
	case m.schemaErr != nil:
		d.Outcome, d.Stage = Deny, StageSchema
		d.Reason = "the tool's input schema could not be compiled, so its arguments cannot be checked: " + m.schemaErr.Error()
		if tr != nil {
			tr.add(StageSchema, false, "%s", d.Reason)
		}
		return d
	case m.schema != nil:
		if err := m.schema.validate(args); err != nil {
			d.Outcome, d.Stage = Deny, StageSchema
			d.Reason = "arguments do not match the input schema: " + err.Error()
			if tr != nil {
				tr.add(StageSchema, false, "%s", d.Reason)
			}
			return d
		}
		if tr != nil {
			tr.add(StageSchema, true, "arguments match the input schema")
		}
	case tr != nil:
		tr.add(StageSchema, true, "input schema unknown (the server's tools were not listed): not checked, the workspace's declarations decide")
	}

	for _, k := range g.constraints {
		err := caseVariantOf(args, k.param)
		if err == nil {
			err = k.check(args, m.baseDir)
		}
		if err != nil {
			d.Outcome, d.Stage, d.Reason = Deny, StageConstraints, err.Error()
			if tr != nil {
				tr.add(StageConstraints, false, "%s", d.Reason)
			}
			return d
		}
	}
	if tr != nil {
		if len(g.constraints) == 0 {
			tr.add(StageConstraints, true, "the grant has no param_constraints")
		} else {
			tr.add(StageConstraints, true, "param_constraints hold for: %s", constrainedParams(g))
		}
	}

	d.Outcome, d.Stage, d.Reason = tiers.OutcomeFor(m.tier, m.effects), StageTier, m.tierReason
	if tr != nil {
		tr.add(StageTier, d.Outcome != Deny, "%s → %s", m.tierReason, d.Outcome)
	}
	return d
}

// miss says why lookup found no grant, for Explain only.
type miss int

const (
	missNone miss = iota
	missSurface
	missMember
	missNotGranted
	missBulkWrite
	missUnlisted
)

// lookup finds the member and the grant that covers it: an exact grant
// first, else the surface's bulk grant, which covers a pack's read commands
// or a server's listed tools.
func (p *Policy) lookup(ag *agent, surfaceID, memberName string) (*member, *grant, miss) {
	s := p.surfaces[surfaceID]
	if s == nil {
		return nil, nil, missSurface
	}
	m := s.members[memberName]
	if g := ag.exact[toolKey{surfaceID, memberName}]; g != nil {
		if m == nil {
			return nil, nil, missMember
		}
		return m, g, missNone
	}
	g := ag.bulk[surfaceID]
	switch {
	case g == nil && m == nil:
		return nil, nil, missMember
	case g == nil:
		return nil, nil, missNotGranted
	case !s.listed:
		return nil, nil, missUnlisted
	case m == nil:
		return nil, nil, missMember
	case g.cap.Kind == KindPack && m.effects != workspace.EffectRead:
		return nil, nil, missBulkWrite
	}
	return m, g, missNone
}

func (w miss) explain(p *Policy, ag *agent, surfaceID, memberName string) string {
	tool := surfaceID + ":" + memberName
	switch w {
	case missSurface:
		return fmt.Sprintf("no surface %q is declared (surfaces: %s)", surfaceID, strings.Join(p.order, ", "))
	case missMember:
		s := p.surfaces[surfaceID]
		if s.kind == KindMCPSurface && s.listed {
			return fmt.Sprintf("server %q does not list a tool %q", surfaceID, memberName)
		}
		if s.kind == KindMCPSurface {
			return fmt.Sprintf("%s is not granted to agent %q, and the workspace does not name it", tool, ag.id)
		}
		return fmt.Sprintf("pack %q has no command %q (commands: %s)", surfaceID, memberName, strings.Join(s.order, ", "))
	case missNotGranted:
		return fmt.Sprintf("no grant of agent %q covers %s", ag.id, tool)
	case missBulkWrite:
		return fmt.Sprintf("%s covers only the read commands of %q, and %s is a write; grant it by name as tool:%s", ag.bulk[surfaceID].text, surfaceID, memberName, tool)
	case missUnlisted:
		return fmt.Sprintf("%s covers every tool server %q lists, but its tools have not been listed (offline, or the server is unreachable), so nothing is covered", ag.bulk[surfaceID].text, surfaceID)
	}
	return "no grant covers " + tool
}

func grantDetail(s *surface, m *member, g *grant) string {
	switch g.cap.Kind {
	case KindPack:
		return fmt.Sprintf("granted by %s, which covers the pack's read commands; %s is a read", g.text, m.name)
	case KindServer:
		return fmt.Sprintf("granted by %s, which covers every tool the server lists", g.text)
	}
	if g.text != g.cap.String() {
		return fmt.Sprintf("granted by %s (%s)", g.text, g.cap)
	}
	if s.kind == KindMCPSurface && !s.listed {
		return fmt.Sprintf("granted by %s (the server's tools are not listed; using what the workspace declares)", g.text)
	}
	return "granted by " + g.text
}

func constrainedParams(g *grant) string {
	names := make([]string, len(g.constraints))
	for i, k := range g.constraints {
		names[i] = k.param
	}
	return strings.Join(names, ", ")
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}
