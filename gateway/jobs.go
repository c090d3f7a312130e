package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/tiers"
)

// Background jobs. A command declared background: true passes the same
// pipeline as any call (decision, approval, Prepare) and then starts as a
// job of the calling agent instead of being waited for. The agent follows
// it with three tools shown on the surface's endpoint, only to agents that
// hold a background command there: job-status, job-logs and job-cancel.
// They see only the calling agent's own jobs on that surface.
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
	out := mcp.NewToolResultText(text)
	out.StructuredContent = jobView(info)
	return callpipe.Outcome{Result: marshalResult(out), Argv: inv.Argv, Note: "started background job " + info.ID}
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

// jobToolDefinitions are the definitions of the three job tools.
func jobToolDefinitions() []mcp.Tool {
	yes, no := true, false
	jobID := mcp.WithString("job_id", mcp.Description("The job id returned when the job was started."), mcp.MaxLength(64))
	status := mcp.NewTool(jobStatusTool,
		mcp.WithDescription("Show one of your background jobs on this endpoint (state: running, succeeded, failed, cancelled or stopped; exit status, duration, output sizes), or all of them when job_id is omitted."),
		jobID, mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &no}))
	logs := mcp.NewTool(jobLogsTool,
		mcp.WithDescription("Read a page of a background job's output, from offset (0 for the start). Pass the next_offset it reports to read on; done: true means the job has ended and everything was read."),
		mcp.WithString("job_id", mcp.Required(), mcp.Description("The job id."), mcp.MaxLength(64)),
		mcp.WithString("stream", mcp.Enum(string(packs.Stdout), string(packs.Stderr)), mcp.Description("stdout (default) or stderr.")),
		mcp.WithNumber("offset", mcp.Min(0), mcp.Description("Byte offset to read from (default 0).")),
		mcp.WithNumber("limit", mcp.Min(1), mcp.Max(packs.MaxLogPage), mcp.Description(fmt.Sprintf("Most bytes to return (default %d).", packs.DefaultLogPage))),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: &yes, DestructiveHint: &no}))
	cancelTool := mcp.NewTool(jobCancelTool,
		mcp.WithDescription("Stop one of your running background jobs: its whole process group is terminated. Returns its final status."),
		mcp.WithString("job_id", mcp.Required(), mcp.Description("The job id."), mcp.MaxLength(64)),
		mcp.WithToolAnnotation(mcp.ToolAnnotation{ReadOnlyHint: &no, DestructiveHint: &yes}))
	return []mcp.Tool{status, logs, cancelTool}
}

// callJobTool answers a call of one of the job tools; handled is false
// when name is not one (or the agent is not shown them).
func (g *Gateway) callJobTool(ctx context.Context, agent string, s *surface, v *agentView, name string, args map[string]any) (result []byte, handled bool) {
	if !v.jobs {
		return nil, false
	}
	str := func(k string) string { x, _ := args[k].(string); return x }
	switch name {
	case jobStatusTool:
		return marshalResult(g.jobStatus(agent, s, str("job_id"))), true
	case jobLogsTool:
		return marshalResult(g.jobLogs(agent, s, str("job_id"), str("stream"), number(args["offset"]), number(args["limit"]))), true
	case jobCancelTool:
		return marshalResult(g.jobCancel(ctx, agent, s, str("job_id"))), true
	}
	return nil, false
}

// number reads a JSON number argument (json.Number or float64); 0 when
// absent or not a number.
func number(v any) float64 {
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case float64:
		return x
	}
	return 0
}

// ownJob returns agent's job id if it belongs to surface s.
func (g *Gateway) ownJob(agent string, s *surface, id string) (packs.JobInfo, error) {
	info, err := g.jobs.Get(agent, id)
	if err == nil && info.Pack != s.pack.ID {
		err = packs.ErrNoJob
	}
	return info, err
}

func (g *Gateway) jobStatus(agent string, s *surface, id string) *mcp.CallToolResult {
	if id == "" {
		var views []any
		var lines []string
		local := map[string]bool{}
		for _, info := range g.jobs.List(agent) {
			if info.Pack != s.pack.ID {
				continue
			}
			local[info.ID] = true
			views = append(views, jobView(info))
			lines = append(lines, jobLine(info))
		}
		for _, rec := range g.storedJobs(agent, s) {
			if !local[rec.ID] {
				views = append(views, storedJobView(rec))
				lines = append(lines, storedJobLine(rec))
			}
		}
		if len(lines) == 0 {
			lines = []string{"no background jobs"}
		}
		out := mcp.NewToolResultText(strings.Join(lines, "\n"))
		out.StructuredContent = map[string]any{"jobs": views}
		return out
	}
	info, err := g.ownJob(agent, s, id)
	if err != nil {
		if rec, ok := g.storedJob(agent, s, id); ok {
			out := mcp.NewToolResultText(storedJobLine(rec))
			out.StructuredContent = storedJobView(rec)
			return out
		}
		return mcp.NewToolResultError(err.Error())
	}
	out := mcp.NewToolResultText(jobLine(info))
	out.StructuredContent = jobView(info)
	return out
}

func (g *Gateway) jobLogs(agent string, s *surface, id, stream string, offset, limit float64) *mcp.CallToolResult {
	if _, err := g.ownJob(agent, s, id); err != nil {
		if _, ok := g.storedJob(agent, s, id); ok {
			return mcp.NewToolResultError(elsewhere(id, "output"))
		}
		return mcp.NewToolResultError(err.Error())
	}
	page, err := g.jobs.Logs(agent, id, packs.Stream(stream), int64(offset), int(limit))
	if err != nil {
		return mcp.NewToolResultError(err.Error())
	}
	text := page.Data
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	text += fmt.Sprintf("[job-logs %s: bytes %d-%d of %d kept", page.Stream, page.Offset, page.Next, page.Kept)
	if page.Dropped > 0 {
		text += fmt.Sprintf(", %d more dropped past the output cap", page.Dropped)
	}
	if page.Done {
		text += "; done]"
	} else {
		text += fmt.Sprintf("; next_offset %d]", page.Next)
	}
	out := mcp.NewToolResultText(text)
	out.StructuredContent = map[string]any{
		"job_id": id, "stream": page.Stream, "offset": page.Offset, "next_offset": page.Next,
		"kept": page.Kept, "dropped": page.Dropped, "done": page.Done, "data": page.Data,
	}
	return out
}

// jobCancel audits a cancel request and stops the job; a request for a job
// the agent does not own is audited as a refusal.
func (g *Gateway) jobCancel(ctx context.Context, agent string, s *surface, id string) *mcp.CallToolResult {
	info, err := g.ownJob(agent, s, id)
	if err != nil {
		if _, ok := g.storedJob(agent, s, id); ok {
			err = errors.New(elsewhere(id, "cancel"))
		}
		ev := callpipe.NewEvent(agent, callpipe.Command, callpipe.VerbJobCancel, s.pack.ID, "")
		ev.Decision = string(tiers.Deny)
		ev.Reason = "no such job of this agent on this surface"
		if aerr := g.pipe.Journal().Append(ev); aerr != nil {
			return mcp.NewToolResultError(callpipe.DeniedPrefix + "the audit log could not be written, so the call is refused: " + aerr.Error())
		}
		return mcp.NewToolResultError(callpipe.DeniedPrefix + err.Error())
	}
	tag, _ := info.Tag.(jobTag)
	ev := jobEvent(tag.start, info, callpipe.VerbJobCancel, string(tiers.Allow))
	ev.Reason = fmt.Sprintf("background job %s: cancel requested by its caller (state was %s)", info.ID, info.State)
	if err := g.pipe.Journal().Append(ev); err != nil {
		return mcp.NewToolResultError(callpipe.DeniedPrefix + "the audit log could not be written, so the call is refused: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, jobCloseWait)
	defer cancel()
	info, err = g.jobs.Cancel(ctx, agent, id)
	if err != nil {
		return mcp.NewToolResultError(err.Error())
	}
	out := mcp.NewToolResultText(jobLine(info))
	out.StructuredContent = jobView(info)
	return out
}

// jobLine is a one-line summary of a job for people and models.
func jobLine(info packs.JobInfo) string {
	line := fmt.Sprintf("%s %s:%s %s, started %s", info.ID, info.Pack, info.Command, info.State, info.Started.UTC().Format(time.RFC3339))
	if res := info.Result; res != nil {
		line += fmt.Sprintf(", exit %d after %s, %d bytes of output", res.ExitCode, res.Duration.Round(time.Millisecond), info.StdoutBytes)
		if res.Err != "" {
			line += ": " + res.Err
		}
	} else {
		line += fmt.Sprintf(", %d bytes of output so far", info.StdoutBytes)
	}
	return line
}

// jobView is a job's structured status.
func jobView(info packs.JobInfo) map[string]any {
	v := map[string]any{
		"job_id": info.ID, "command": info.Command, "state": info.State,
		"started":    info.Started.UTC().Format(time.RFC3339Nano),
		"timeout_ms": info.Timeout.Milliseconds(), "max_output": info.MaxOutput,
		"stdout_bytes": info.StdoutBytes, "stderr_bytes": info.StderrBytes,
	}
	if res := info.Result; res != nil {
		v["ended"] = info.Ended.UTC().Format(time.RFC3339Nano)
		v["exit"] = res.ExitCode
		v["duration_ms"] = res.Duration.Milliseconds()
		v["truncated"] = res.Truncated
		if res.Err != "" {
			v["error"] = res.Err
		}
	}
	return v
}
