package grantcheck

import (
	"fmt"

	"github.com/toolgate/toolgate/workspace"
)

// ApprovalRule is one compiled approvals.rules entry: the agent, the tools it
// names and the argument bounds, held to the same grammar and the same
// param_constraints evaluation as grants so a rule means what a grant with
// the same text would. Whether a rule may apply at all (cautious writes only,
// never strict) is the approval broker's call, not this type's.
type ApprovalRule struct {
	// Agent is the agent whose calls the rule approves.
	Agent string
	// Capability is the tool (KindTool) or every tool of a surface
	// (KindSurface, written tool:<surface>:*) the rule covers.
	Capability Capability
	// Text is the capability as written, for messages.
	Text        string
	Pos         workspace.Pos
	constraints []*constraint
}

// CompileApprovalRules compiles the workspace's approvals.rules against the
// policy: the agent must be declared, the capability must name a declared
// surface (tool:<s>:<m>, tool:<s>:* or a pack alias), and the constraints
// must compile. Every problem is reported at once as a workspace.ErrorList.
func (p *Policy) CompileApprovalRules(rules []*workspace.ApprovalRule) ([]*ApprovalRule, error) {
	var errs workspace.ErrorList
	out := make([]*ApprovalRule, 0, len(rules))
	for _, r := range rules {
		if _, ok := p.agents[r.Agent]; !ok {
			errs = append(errs, workspace.Errorf(r.Pos, "approval rule: agent %q is not declared; name an agent from agents:", r.Agent))
			continue
		}
		c, err := p.ruleCapability(r.Capability)
		if err != nil {
			errs = append(errs, workspace.Errorf(r.Pos, "approval rule: capability %q: %v", r.Capability, err))
			continue
		}
		cr := &ApprovalRule{Agent: r.Agent, Capability: c, Text: r.Capability, Pos: r.Pos}
		for _, wc := range r.ParamConstraints {
			k, err := compileConstraint(wc, p.wsDir)
			if err != nil {
				errs = append(errs, workspace.Errorf(wc.Pos, "approval rule: %v", err))
				continue
			}
			cr.constraints = append(cr.constraints, k)
		}
		out = append(out, cr)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ruleCapability parses a rule's capability and resolves a pack alias. Bulk
// forms that by definition cover only reads (pack:, server:) are refused:
// rules exist for writes, so such a rule could only be a mistake.
func (p *Policy) ruleCapability(text string) (Capability, error) {
	c, err := Parse(text)
	if err != nil {
		return Capability{}, err
	}
	if c.Kind == KindAlias {
		c, err = (&compiler{p: p}).resolveAlias(c.Alias)
		if err != nil {
			return Capability{}, err
		}
	}
	switch c.Kind {
	case KindTool, KindSurface:
	default:
		return Capability{}, fmt.Errorf("a rule names one tool (tool:<surface>:<member>) or every tool of a surface (tool:<surface>:*), not a %s capability", c.Kind)
	}
	s, ok := p.surfaces[c.Surface]
	if !ok {
		return Capability{}, fmt.Errorf("surface %q is not declared", c.Surface)
	}
	if c.Kind == KindTool && s.kind == KindPackSurface {
		if _, ok := s.members[c.Member]; !ok {
			return Capability{}, fmt.Errorf("pack %q has no command %q", c.Surface, c.Member)
		}
	}
	return c, nil
}

// RuleCovers reports whether rule r matches agentID's call of
// surfaceID:memberName with args: same agent, a tool the capability names,
// and every param_constraint holding. A constrained parameter that is
// absent does not match, as for grants.
func (p *Policy) RuleCovers(r *ApprovalRule, agentID, surfaceID, memberName string, args map[string]any) bool {
	if r.Agent != agentID || r.Capability.Surface != surfaceID {
		return false
	}
	if r.Capability.Kind == KindTool && r.Capability.Member != memberName {
		return false
	}
	base := p.wsDir
	if s := p.surfaces[surfaceID]; s != nil {
		if m := s.members[memberName]; m != nil && m.baseDir != "" {
			base = m.baseDir
		}
	}
	for _, k := range r.constraints {
		if k.check(args, base) != nil {
			return false
		}
	}
	return true
}
