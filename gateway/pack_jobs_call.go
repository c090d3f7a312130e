package gateway

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// The job tools pass the call pipeline like any tool: the pack executor
// claims them (callpipe.OwnTools) for an agent shown them on the surface,
// decides them — a job an argument names must be the agent's own on this
// surface, else the call is refused (audited) with the answer an unknown
// job gets — and runs the allowed ones as a run of their own, with a
// decision and an outcome event.

// maxJobID is the longest job_id the job tools take (their input
// schemas' maxLength).
const maxJobID = 64

// isJobTool reports whether name is one of the job tools.
func isJobTool(name string) bool {
	return name == jobStatusTool || name == jobLogsTool || name == jobCancelTool
}

// DecideOwn implements callpipe.OwnTools for the job tools.
func (x packExecutor) DecideOwn(_ context.Context, agent string, call *callpipe.Call) (grantcheck.Decision, bool) {
	if !isJobTool(call.Name) || !x.g.view(agent, x.s.pack.ID).jobs {
		return grantcheck.Decision{}, false
	}
	d := grantcheck.Decision{Outcome: grantcheck.Allow, Stage: grantcheck.StageTier, Effects: workspace.EffectRead,
		Grant:  "the background commands the agent holds on " + x.s.pack.ID,
		Reason: call.Name + " of the agent's own jobs on " + x.s.pack.ID}
	if call.Name == jobCancelTool {
		d.Effects = workspace.EffectWrite
	}
	id, _ := call.Args["job_id"].(string)
	if id == "" && call.Name != jobStatusTool {
		d.Outcome, d.Stage, d.Reason = grantcheck.Deny, grantcheck.StageSchema, call.Name+" needs job_id (a job id job-status lists)"
		return d, true
	}
	if len(id) > maxJobID {
		// As the tools' input schemas say; never quoted into the audit.
		d.Outcome, d.Stage, d.Reason = grantcheck.Deny, grantcheck.StageSchema, fmt.Sprintf("job_id is %d bytes long; job ids are at most %d", len(id), maxJobID)
		return d, true
	}
	if id != "" && !x.g.jobOwned(agent, x.s, id) {
		d.Outcome, d.Stage, d.Reason = grantcheck.Deny, grantcheck.StageConstraints, fmt.Sprintf("no such job %q of this agent on %s", id, x.s.pack.ID)
	}
	return d, true
}

// jobOwned reports whether id is agent's job on surface s, run by this
// process or recorded in the shared store by another.
func (g *Gateway) jobOwned(agent string, s *surface, id string) bool {
	if _, err := g.ownJob(agent, s, id); err == nil {
		return true
	}
	_, ok := g.storedJob(agent, s, id)
	return ok
}

// jobRun is an allowed call of a job tool.
type jobRun struct {
	x    packExecutor
	call *callpipe.Call
}

func (r *jobRun) Preview() []string { return nil }
func (r *jobRun) Discard()          {}

// Execute answers the job tool from the job manager.
func (r *jobRun) Execute(ctx context.Context, _ audit.Event) callpipe.Outcome {
	x := r.x
	res, _ := x.g.callJobTool(ctx, x.agent, x.s, x.g.view(x.agent, x.s.pack.ID), r.call.Name, r.call.Args)
	out := callpipe.Outcome{Result: res}
	if isErrorResult(res) {
		out.Error = "the job tool reported an error (isError)"
	}
	return out
}
