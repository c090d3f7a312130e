package callpipe

import (
	"context"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// The stages the pipeline adds after grantcheck's: the pin of the tool's
// definition, and the approval rules.
const (
	StagePin      grantcheck.Stage = "pin"
	StageApproval grantcheck.Stage = "approval"
)

// Verdict is what the pipeline decides about a call before anything runs:
// grantcheck's decision with the pin of the tool's definition applied, and
// the approval rule that approves it, if one does.
type Verdict struct {
	grantcheck.Decision
	// ApprovedBy is the rule ("rule:N") that approves a call the tier sent
	// to approval; the call then runs without a human. "" otherwise.
	ApprovedBy string `json:"approved_by,omitempty"`
}

// Final is the outcome a caller sees: an approval a rule gives is allow.
func (v Verdict) Final() grantcheck.Outcome {
	if v.ApprovedBy != "" {
		return grantcheck.Allow
	}
	return v.Outcome
}

// Explanation is a verdict with every stage's result, for `toolgate
// explain`; its details may name what exists, never send them to an agent.
type Explanation struct {
	Verdict
	Steps []grantcheck.Step `json:"steps"`
}

// Decide is the one decision of a call of surface:member by agent with
// args under s — what Pipeline.Call runs before it prepares anything, and
// what `toolgate explain`, `check` and `policy test` show: the compiled
// policy (identity, grant, scopes, schema, constraints, tier), then the pin
// of the tool's definition, then the approval rules. It executes nothing
// and does not check what only an executor can (a pack's `requires`, the
// argv its arguments make).
func (s *Snapshot) Decide(agent, surface, member string, args map[string]any) Verdict {
	v := Verdict{Decision: s.decide(agent, surface, member, args, nil)}
	v.ApprovedBy = s.ruleApprover(v.Decision, agent, surface, member, args)
	return v
}

// Explain is Decide with a record of each stage.
func (s *Snapshot) Explain(agent, surface, member string, args map[string]any) Explanation {
	e := s.Policy.Explain(agent, surface, member, args)
	steps := e.Steps
	v := Verdict{Decision: s.decide(agent, surface, member, args, &steps)}
	v.ApprovedBy = s.ruleApprover(v.Decision, agent, surface, member, args)
	switch {
	case v.Outcome != grantcheck.Approval:
		steps = append(steps, grantcheck.Step{Stage: StageApproval, Status: "skipped"})
	case v.ApprovedBy != "":
		steps = append(steps, grantcheck.Step{Stage: StageApproval, Status: "pass", Detail: "approved by " + v.ApprovedBy + " of approvals.rules: runs without a human"})
	default:
		detail := "no approval rule covers the call: it is held until an operator approves it"
		if v.Tier == workspace.TierStrict {
			detail = "strict tier: approval rules never apply; held until an operator approves it"
		}
		steps = append(steps, grantcheck.Step{Stage: StageApproval, Status: "held", Detail: detail})
	}
	return Explanation{Verdict: v, Steps: steps}
}

// decide is the policy's decision with the pin applied; steps, when set,
// get the pin stage (Explain). Policy.Decide and Policy.Explain are one
// function in grantcheck, so both paths decide alike.
func (s *Snapshot) decide(agent, surface, member string, args map[string]any, steps *[]grantcheck.Step) grantcheck.Decision {
	d := s.Policy.Decide(agent, surface, member, args)
	if d.Outcome == grantcheck.Deny {
		if steps != nil {
			*steps = append(*steps, grantcheck.Step{Stage: StagePin, Status: "skipped"})
		}
		return d
	}
	if err := s.PinRefusal(surface, member); err != nil {
		d.Outcome, d.Stage, d.Reason = grantcheck.Deny, StagePin, err.Error()
		if steps != nil {
			*steps = append(*steps, grantcheck.Step{Stage: StagePin, Status: "fail", Detail: d.Reason})
		}
		return d
	}
	if steps != nil {
		detail := "no toolgate.lock: definitions are not pinned"
		if s.Lock != nil {
			detail = "the definition is the one pinned in toolgate.lock"
		}
		*steps = append(*steps, grantcheck.Step{Stage: StagePin, Status: "pass", Detail: detail})
	}
	return d
}

// PinRefusal is why surface's member may not be served under the lock of
// s; nil without a lock or when its definition is the pinned one.
func (s *Snapshot) PinRefusal(surface, member string) error {
	if s.Lock == nil {
		return nil
	}
	var live pin.Digest
	if s.Live != nil {
		live = s.Live(surface, member)
	}
	return s.Lock.Refusal(surface, member, live)
}

// ruleApprover is the approval rule approving a call decided d, "" when
// none does (or the call needs no approval).
func (s *Snapshot) ruleApprover(d grantcheck.Decision, agent, surface, member string, args map[string]any) string {
	by, ok := s.Rules.Match(s.Policy, d, agent, surface, member, args)
	if !ok {
		return ""
	}
	return by
}

// OwnTools is implemented by an executor that answers some tools itself,
// from no pack and no server: toolgate's job tools (job-status, job-logs,
// job-cancel). The pipeline asks it first; a tool it claims (own) is
// decided by it — whether the agent is shown it, and its own bounds (a job
// an argument names must be the agent's) — and is then prepared, executed
// and audited like any other call. A tool it does not claim is decided by
// the policy.
type OwnTools interface {
	DecideOwn(ctx context.Context, agent string, call *Call) (d grantcheck.Decision, own bool)
}

// decide is the decision stage of the pipeline, the one the first pass
// and the re-decision of a held call share: the executor's own tools, else
// the policy of snap, narrowed by the caller's token scopes.
func decide(ctx context.Context, snap *Snapshot, req Request, call *Call) grantcheck.Decision {
	if o, ok := req.Exec.(OwnTools); ok {
		if d, own := o.DecideOwn(ctx, req.Agent, call); own {
			return d
		}
	}
	d := snap.decide(req.Agent, req.Surface, call.Name, call.Args, nil)
	if req.TokenScoped && d.Outcome != grantcheck.Deny {
		d = snap.Policy.NarrowScopes(d, req.Surface, call.Name, req.TokenScopes)
	}
	return d
}

// ExplainWithToken is Explain for a call made with an access token granting
// token: the agent may use only its declared scopes the token also grants,
// as decide narrows a served call. A call the narrowing refuses has no
// approving rule.
func (s *Snapshot) ExplainWithToken(agent, surface, member string, args map[string]any, token []string) Explanation {
	e := s.Explain(agent, surface, member, args)
	n := s.Policy.NarrowExplanation(grantcheck.Explanation{Decision: e.Decision, Steps: e.Steps}, surface, member, token)
	if n.Outcome != e.Outcome {
		e.ApprovedBy = ""
	}
	e.Decision, e.Steps = n.Decision, n.Steps
	return e
}
