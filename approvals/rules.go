package approvals

import (
	"strconv"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// Rules are a workspace's approvals.rules, compiled: declarative approvers
// for cautious writes. They never approve a strict call, nor anything the
// tier did not send to approval.
type Rules struct {
	list []*grantcheck.ApprovalRule
}

// CompileRules checks and compiles ws's approval rules against policy; every
// problem is reported at once, positioned, as a workspace.ErrorList.
func CompileRules(policy *grantcheck.Policy, ws *workspace.Workspace) (*Rules, error) {
	list, err := policy.CompileApprovalRules(ws.Gateway.Approvals.Rules)
	if err != nil {
		return nil, err
	}
	return &Rules{list: list}, nil
}

// Len is the number of rules.
func (r *Rules) Len() int {
	if r == nil {
		return 0
	}
	return len(r.list)
}

// Match returns the approver name ("rule:<n>", n counting from 1 in the
// order written) of the first rule that approves agent's call of
// surface:member with args, given the grant checker's decision d. Only a
// decision of Approval on a cautious write can match.
func (r *Rules) Match(policy *grantcheck.Policy, d grantcheck.Decision, agent, surface, member string, args map[string]any) (string, bool) {
	if r == nil || d.Outcome != grantcheck.Approval || d.Tier != workspace.TierCautious || d.Effects == workspace.EffectRead {
		return "", false
	}
	for i, rule := range r.list {
		if policy.RuleCovers(rule, agent, surface, member, args) {
			return "rule:" + strconv.Itoa(i+1), true
		}
	}
	return "", false
}

// Naming returns the approvers ("rule:<n>") of the rules that may approve
// agent's calls of surface:member — those naming the agent and the tool
// (or its whole surface), whatever their argument bounds — for `toolgate
// check` to say that a cautious write may run without a human.
func (r *Rules) Naming(agent, surface, member string) []string {
	if r == nil {
		return nil
	}
	var out []string
	for i, rule := range r.list {
		c := rule.Capability
		if rule.Agent == agent && c.Surface == surface && (c.Kind != grantcheck.KindTool || c.Member == member) {
			out = append(out, "rule:"+strconv.Itoa(i+1))
		}
	}
	return out
}
