package gateway

import (
	"context"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
)

// Background jobs. A command declared background: true passes the same
// pipeline as any call (decision, approval, Prepare) and then starts as a
// job of the calling agent instead of being waited for. The agent follows
// it with three tools shown on the surface's endpoint, only to agents that
// hold a background command there: job-status, job-logs and job-cancel.
// They see only the calling agent's own jobs on that surface, and pass the
// call pipeline like any tool (pack_jobs_call.go).
//
// Audit: the start is the call's own event (decision allow, argv, reason
// naming the job id); the end is an event with action
// command:job-end:<pack>:<command> and the job's final state as decision
// (succeeded, failed, cancelled, stopped) carrying exit, duration, output
// size and error; a cancel is an event with action
// command:job-cancel:<pack>:<command>. All three carry the starting call's
// args_sha256, so they join up.
//
// When the gateway stops (Close), every running job is stopped: its process
// group gets SIGTERM, then SIGKILL after the kill grace, and its end is
// audited with decision "stopped" before the audit log closes.
//
// Job records: the process that starts a job runs it, holds its output and
// alone can cancel it; it writes the job's record (start, then end) to the
// shared store, so job-status in any other process of the deployment — a
// stdio instance restarted by its harness, another replica — still tells
// the agent how its job is or how it ended.

// Names of the job tools.
const (
	jobStatusTool = "job-status"
	jobLogsTool   = "job-logs"
	jobCancelTool = "job-cancel"
)

// jobCloseWait bounds how long Close waits for running jobs to stop; their
// groups are killed after the runner's kill grace, so this is slack.
const jobCloseWait = 10 * time.Second

// jobTag is what the gateway keeps with a job: the start event, whose
// identity the end and cancel events repeat.
type jobTag struct {
	start audit.Event
}

// startJob starts inv as a background job for the caller of decision and
// returns at once with the job id; the job's end is audited later as an
// event of its own referring to decision.
func (g *Gateway) startJob(s *surface, decision audit.Event, inv *packs.Invocation) callpipe.Outcome {
	info, err := g.jobs.Start(decision.Agent, inv, jobTag{start: decision})
	if err != nil {
		msg := fmt.Sprintf("%s:%s could not start: %s", s.pack.ID, inv.Command, g.runner.Redact(err.Error()))
		return callpipe.Outcome{Result: callpipe.ErrorResult(msg), Argv: inv.Argv, Error: err.Error()}
	}
	g.recordJobStart(info)
	g.log.Info("background job started", "agent", decision.Agent, "action", decision.Action, "job", info.ID)
	text := fmt.Sprintf("Started background job %s (%s:%s), bounded by %s and %d bytes of output.\n"+
		"Follow it with %s {\"job_id\": %q}, read its output with %s, stop it with %s.",
		info.ID, s.pack.ID, inv.Command, info.Timeout, info.MaxOutput, jobStatusTool, info.ID, jobLogsTool, jobCancelTool)
	out := callpipe.ToolResult{Text: text, Structured: jobView(info)}
	return callpipe.Outcome{Result: out.JSON(), Argv: inv.Argv, Note: "started background job " + info.ID}
}

// jobEnded audits a job's end and records it in the store; the job
// manager calls it once per job.
func (g *Gateway) jobEnded(info packs.JobInfo) {
	defer g.recordJobEnd(info)
	tag, _ := info.Tag.(jobTag)
	ev := jobEvent(tag.start, info, callpipe.VerbJobEnd, string(info.State))
	ev.Reason = fmt.Sprintf("background job %s %s", info.ID, info.State)
	if res := info.Result; res != nil {
		ev.Argv = res.Argv
		exit, dur, out, trunc := res.ExitCode, res.Duration.Milliseconds(), res.OutputBytes, res.Truncated
		ev.Exit, ev.DurationMS, ev.OutputBytes, ev.Truncated = &exit, &dur, &out, &trunc
		ev.Error = res.Err
	}
	if err := g.pipe.Journal().Append(ev); err != nil {
		g.log.Error("audit append failed for a background job's end", "agent", info.Owner, "job", info.ID, "err", err)
	}
	g.log.Info("background job ended", "agent", info.Owner, "action", ev.Action, "job", info.ID, "state", info.State)
}

// jobEvent is an audit event about job info, referring to the decision
// event of the call that started it.
func jobEvent(start audit.Event, info packs.JobInfo, verb, decision string) *audit.Event {
	ev := callpipe.NewEvent(info.Owner, callpipe.Command, verb, info.Pack, info.Command)
	ev.Decision = decision
	ev.Tier = start.Tier
	ev.Payload.Effects = start.Payload.Effects
	ev.ArgsSHA256 = start.ArgsSHA256
	ev.Revision = start.Revision
	if start.Seq > 0 {
		seq := start.Seq
		ev.Of = &seq
	}
	return ev
}

// closeJobs stops every running job, so their ends are audited before the
// audit log closes.
func (g *Gateway) closeJobs() {
	ctx, cancel := context.WithTimeout(context.Background(), jobCloseWait)
	defer cancel()
	if err := g.jobs.Close(ctx); err != nil {
		g.log.Error("background jobs did not stop in time", "err", err)
	}
}

// hasJobTools reports whether an agent holding tools on s is shown the
// job tools there: it holds a background command, and no command of the
// pack is named like a job tool.
func (g *Gateway) hasJobTools(s *surface, tools []grantcheck.ToolView) bool {
	has := false
	for _, v := range tools {
		if c := s.commands[v.Name]; c != nil && c.Background {
			has = true
			break
		}
	}
	if !has {
		return false
	}
	for _, name := range []string{jobStatusTool, jobLogsTool, jobCancelTool} {
		if _, clash := s.commands[name]; clash {
			g.log.Warn("pack has a command named like a job tool; its background jobs get no job tools", "surface", s.pack.ID, "command", name)
			return false
		}
	}
	return true
}
