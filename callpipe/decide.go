package callpipe

import (
	"context"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/tiers"
)

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
	d := snap.Policy.Decide(req.Agent, req.Surface, call.Name, call.Args)
	if req.TokenScoped && d.Outcome != tiers.Deny {
		d = snap.Policy.NarrowScopes(d, req.Surface, call.Name, req.TokenScopes)
	}
	return d
}
