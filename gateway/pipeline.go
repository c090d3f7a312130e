package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/tiers"
	"github.com/toolgate/toolgate/workspace"
)

// DeniedPrefix starts the text of every refusal, proxied or local, so
// harnesses and people recognise a governance decision at a glance.
const DeniedPrefix = "DENIED: "

// callPack runs the DESIGN.md §5 pipeline for one pack command call: decide,
// execute what is allowed, audit every outcome. A call whose audit event
// cannot be written fails, whatever it did.
func (g *Gateway) callPack(ctx context.Context, agent string, s *surface, member string, args map[string]any) *mcp.CallToolResult {
	if args == nil {
		args = map[string]any{}
	}
	d := g.Policy().Decide(agent, s.pack.ID, member, args)
	ev := &audit.Event{
		Agent:      agent,
		Action:     "command:call:" + s.pack.ID + ":" + member,
		Decision:   string(d.Outcome),
		Reason:     d.Reason,
		Tier:       string(d.Tier),
		Payload:    audit.Payload{Provider: "command", Container: s.pack.ID, Member: member, Effects: string(d.Effects)},
		ArgsSHA256: audit.ArgsDigest(args),
	}
	// Reasons may quote argument values, so they stay at debug level.
	g.log.Info("decision", "agent", agent, "action", ev.Action, "decision", d.Outcome, "tier", d.Tier)
	g.log.Debug("decision reason", "agent", agent, "action", ev.Action, "reason", d.Reason)
	switch d.Outcome {
	case tiers.Allow:
	case tiers.Approval:
		if r := g.awaitApproval(ctx, ev, d, args, previewArgv(s.commands[member], args)); r != nil {
			return r
		}
	default:
		return g.refuse(ev, d.Reason)
	}
	if r := g.refuseWhileAuditFails(ev); r != nil {
		return r
	}
	cmd := s.commands[member]
	inv, err := g.runner.Prepare(s.pack, cmd, args)
	if err != nil {
		ev.Decision = string(tiers.Deny)
		ev.Reason = g.runner.Redact(err.Error())
		return g.refuse(ev, ev.Reason)
	}
	if cmd.Background {
		return g.startJob(agent, s, ev, inv)
	}
	res, err := g.runner.Run(ctx, inv)
	if err != nil {
		ev.Error = g.runner.Redact(err.Error())
		if aerr := g.appendAudit(ev); aerr != nil {
			return auditFailure(aerr)
		}
		return mcp.NewToolResultError(fmt.Sprintf("%s:%s could not run: %s", s.pack.ID, member, ev.Error))
	}
	ev.Argv = res.Argv
	exit, dur, out, trunc := res.ExitCode, res.Duration.Milliseconds(), res.OutputBytes, res.Truncated
	ev.Exit, ev.DurationMS, ev.OutputBytes, ev.Truncated = &exit, &dur, &out, &trunc
	ev.Error = res.Err
	if err := g.appendAudit(ev); err != nil {
		return auditFailure(err)
	}
	return toolResult(s.pack.ID, member, res)
}

// refuseWhileAuditFails keeps side effects from happening unrecorded: once
// an audit append has failed, allowed calls are refused (the refusal itself
// is an append attempt, so the first success lets calls through again).
func (g *Gateway) refuseWhileAuditFails(ev *audit.Event) *mcp.CallToolResult {
	h := &g.health
	h.mu.Lock()
	failing := h.err
	h.mu.Unlock()
	if failing == "" {
		return nil
	}
	ev.Decision = string(tiers.Deny)
	ev.Reason = "the audit log is failing (" + failing + "); calls are refused until it can be written"
	return g.refuse(ev, ev.Reason)
}

// refuse audits a refusal and returns it as the tool result every client
// sees: isError with the DENIED prefix.
func (g *Gateway) refuse(ev *audit.Event, reason string) *mcp.CallToolResult {
	if err := g.appendAudit(ev); err != nil {
		return auditFailure(err)
	}
	return mcp.NewToolResultError(DeniedPrefix + reason)
}

func auditFailure(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(DeniedPrefix + "the audit log could not be written, so the call is refused: " + err.Error())
}

// toolResult turns a finished run into the MCP result: stdout as text (and,
// for a parse: json command, structuredContent — always a JSON object, as
// its declared outputSchema says), or an error carrying stderr.
func toolResult(pack, member string, res *packs.Result) *mcp.CallToolResult {
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
		return mcp.NewToolResultError(msg)
	}
	text := string(res.Stdout)
	if len(notes) > 0 {
		if text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		text += strings.Join(notes, "\n")
	}
	out := mcp.NewToolResultText(text)
	if res.StructuredContent != nil {
		out.StructuredContent = res.StructuredContent
	}
	return out
}

// toolDefinition is the MCP tool an agent is shown: the member name
// unchanged, the schema narrowed by its constraints, hints from effects,
// and an object outputSchema when results carry structuredContent.
func toolDefinition(v grantcheck.ToolView) mcp.Tool {
	t := mcp.NewToolWithRawSchema(v.Name, v.Description, json.RawMessage(v.InputSchema))
	if v.StructuredOutput {
		t.RawOutputSchema = json.RawMessage(packs.OutputSchema)
	}
	read := v.Effects == workspace.EffectRead
	destructive := !read
	t.Annotations = mcp.ToolAnnotation{ReadOnlyHint: &read, DestructiveHint: &destructive}
	return t
}
