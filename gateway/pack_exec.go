package gateway

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/tracing"
	"github.com/toolgate/toolgate/workspace"
)

// DeniedPrefix starts the text of every refusal (callpipe.DeniedPrefix).
const DeniedPrefix = callpipe.DeniedPrefix

// packExecutor runs the calls of one agent on one pack surface: the
// pipeline's executor for command packs.
type packExecutor struct {
	g     *Gateway
	s     *surface
	agent string
}

// packExecutor is the executor of agent's calls on pack surface s.
func (g *Gateway) packExecutor(agent string, s *surface) packExecutor {
	return packExecutor{g: g, s: s, agent: agent}
}

func (x packExecutor) provider() callpipe.Provider { return callpipe.Command }

// Definition implements callpipe.Definer: the digest of pack command name
// as the revision in force declares it.
func (x packExecutor) Definition(name string) string {
	return string(x.g.rev.Load().packPins[x.s.pack.ID][name])
}

// Prepare resolves the call into an invocation (argv by the frozen
// template, the clean environment, bounds); an error refuses the call.
func (x packExecutor) Prepare(ctx context.Context, call *callpipe.Call) (callpipe.Run, error) {
	s, err := x.g.decidingSurface(ctx, x.s.pack.ID) // the pack as the deciding revision declares it
	if err != nil {
		return nil, err
	}
	x.s = s
	if isJobTool(call.Name) && x.g.view(x.agent, s.pack.ID).jobs {
		return &jobRun{x: x, call: call}, nil
	}
	cmd := x.s.commands[call.Name]
	if cmd == nil {
		// Decide only allows declared commands; keep the refusal uniform.
		return nil, errors.New(grantcheck.UnknownToolReason(x.s.pack.ID, call.Name))
	}
	// path_within arguments are opened beneath their roots by the runner
	// and reach the command as /dev/fd/N.
	inv, err := x.g.runner.PrepareBound(x.s.pack, cmd, call.Args, x.g.Policy().PathRoots(x.agent, x.s.pack.ID, call.Name))
	if err != nil {
		return nil, err
	}
	return &packRun{x: x, cmd: cmd, inv: inv}, nil
}

// packRun is one prepared command.
type packRun struct {
	x   packExecutor
	cmd *workspace.Command
	inv *packs.Invocation
}

func (r *packRun) Preview() []string { return r.inv.ArgvNamed }

func (r *packRun) Discard() {}

// Execute runs the command (or starts it as a background job) and turns
// the run into the tool result and the audit's facts.
func (r *packRun) Execute(ctx context.Context, decision audit.Event) callpipe.Outcome {
	g, s := r.x.g, r.x.s
	if r.cmd.Background {
		return g.startJob(s, decision, r.inv)
	}
	ctx, span := g.tracer.StartDownstream(ctx, tracing.Downstream{Server: s.pack.ID, Method: "exec", Tool: r.cmd.ID})
	defer span.End()
	res, err := g.runner.Run(ctx, r.inv)
	if err != nil {
		msg := g.runner.Redact(err.Error())
		return callpipe.Outcome{Result: callpipe.ErrorResult(fmt.Sprintf("%s:%s could not run: %s", s.pack.ID, r.cmd.ID, msg)), Argv: r.inv.Argv, Error: msg}
	}
	exit, out, trunc := res.ExitCode, res.OutputBytes, res.Truncated
	return callpipe.Outcome{
		Result: toolResult(s.pack.ID, r.cmd.ID, res).JSON(),
		Argv:   res.Argv, Exit: &exit, Duration: res.Duration, OutputBytes: &out, Truncated: &trunc, Error: res.Err,
	}
}

// toolResult turns a finished run into the MCP result: stdout as text (and,
// for a parse: json command, structuredContent — always a JSON object, as
// its declared outputSchema says), or an error carrying stderr.
func toolResult(pack, member string, res *packs.Result) callpipe.ToolResult {
	var notes []string
	if res.Truncated {
		notes = append(notes, fmt.Sprintf("[output truncated: cut after %d bytes; at least %d more bytes were discarded]", len(res.Stdout), res.CutBytes))
	}
	if res.ParseNote != "" {
		notes = append(notes, "["+res.ParseNote+"]")
	}
	if res.WrittenTo != "" {
		notes = append(notes, "[wrote "+res.WrittenTo+"]")
	}
	if !res.OK() && !res.Truncated {
		msg := fmt.Sprintf("%s:%s failed: %s", pack, member, res.Err)
		if tail := strings.TrimSpace(res.StderrTail); tail != "" {
			msg += "\n" + tail
		}
		return callpipe.ToolResult{Text: msg, IsError: true}
	}
	text := string(res.Stdout)
	if len(notes) > 0 {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += strings.Join(notes, "\n")
	}
	return callpipe.ToolResult{Text: text, Structured: res.StructuredContent}
}
