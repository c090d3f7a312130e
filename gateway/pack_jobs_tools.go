package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/tiers"
)

// callJobTool answers a call of one of the job tools; handled is false
// when name is not one (or the agent is not shown them).
func (g *Gateway) callJobTool(ctx context.Context, agent string, s *surface, v *agentView, name string, args map[string]any) (result []byte, handled bool) {
	if !v.jobs {
		return nil, false
	}
	str := func(k string) string { x, _ := args[k].(string); return x }
	switch name {
	case jobStatusTool:
		return g.jobStatus(agent, s, str("job_id")).JSON(), true
	case jobLogsTool:
		return g.jobLogs(agent, s, str("job_id"), str("stream"), number(args["offset"]), number(args["limit"])).JSON(), true
	case jobCancelTool:
		return g.jobCancel(ctx, agent, s, str("job_id")).JSON(), true
	}
	return nil, false
}

// jobError is a job tool's error result.
func jobError(text string) callpipe.ToolResult { return callpipe.ToolResult{Text: text, IsError: true} }

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

func (g *Gateway) jobStatus(agent string, s *surface, id string) callpipe.ToolResult {
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
		return callpipe.ToolResult{Text: strings.Join(lines, "\n"), Structured: map[string]any{"jobs": views}}
	}
	info, err := g.ownJob(agent, s, id)
	if err != nil {
		if rec, ok := g.storedJob(agent, s, id); ok {
			return callpipe.ToolResult{Text: storedJobLine(rec), Structured: storedJobView(rec)}
		}
		return jobError(err.Error())
	}
	return callpipe.ToolResult{Text: jobLine(info), Structured: jobView(info)}
}

func (g *Gateway) jobLogs(agent string, s *surface, id, stream string, offset, limit float64) callpipe.ToolResult {
	if _, err := g.ownJob(agent, s, id); err != nil {
		if _, ok := g.storedJob(agent, s, id); ok {
			return jobError(elsewhere(id, "output"))
		}
		return jobError(err.Error())
	}
	page, err := g.jobs.Logs(agent, id, packs.Stream(stream), int64(offset), int(limit))
	if err != nil {
		return jobError(err.Error())
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
	return callpipe.ToolResult{Text: text, Structured: map[string]any{
		"job_id": id, "stream": string(page.Stream), "offset": page.Offset, "next_offset": page.Next,
		"kept": page.Kept, "dropped": page.Dropped, "done": page.Done, "data": page.Data,
	}}
}

// jobCancel audits a cancel request as an event of the job's and stops
// the job. The pipeline already refused (and audited) a cancel of a job
// that is not the agent's; one that ended meanwhile, or that another
// process runs, is an error result, audited as the call's outcome.
func (g *Gateway) jobCancel(ctx context.Context, agent string, s *surface, id string) callpipe.ToolResult {
	info, err := g.ownJob(agent, s, id)
	if err != nil {
		if _, ok := g.storedJob(agent, s, id); ok {
			err = errors.New(elsewhere(id, "cancel"))
		}
		return jobError(err.Error())
	}
	tag, _ := info.Tag.(jobTag)
	ev := jobEvent(tag.start, info, callpipe.VerbJobCancel, string(tiers.Allow))
	ev.Reason = fmt.Sprintf("background job %s: cancel requested by its caller (state was %s)", info.ID, info.State)
	if err := g.pipe.Journal().Append(ev); err != nil {
		return jobError(callpipe.DeniedPrefix + "the audit log could not be written, so the call is refused: " + err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, jobCloseWait)
	defer cancel()
	info, err = g.jobs.Cancel(ctx, agent, id)
	if err != nil {
		return jobError(err.Error())
	}
	return callpipe.ToolResult{Text: jobLine(info), Structured: jobView(info)}
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
		"job_id": info.ID, "command": info.Command, "state": string(info.State),
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
