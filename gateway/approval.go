package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// progressEvery is how often a waiting call tells the client it is still
// waiting, when the client asked for progress.
const progressEvery = 2 * time.Second

// initApprovals builds the broker and compiles the approval rules; decided
// requests are audited as events of their own (approved, denied, expired).
func (g *Gateway) initApprovals(policy *grantcheck.Policy) error {
	rules, err := approvals.CompileRules(policy, g.ws)
	if err != nil {
		return err
	}
	g.rules = rules
	g.approvals = approvals.New(approvals.Options{
		TTL:        g.ws.Gateway.Approvals.TTL.D(),
		OnDecision: g.auditDecision,
	})
	return nil
}

// approvalWait is how long a call waits for a decision.
func (g *Gateway) approvalWait() time.Duration {
	if w := g.ws.Gateway.Approvals.Wait.D(); w > 0 {
		return w
	}
	return approvals.DefaultWait
}

// Approvals returns the broker of this gateway process.
func (g *Gateway) Approvals() *approvals.Broker { return g.approvals }

// awaitApproval is the approval step of the call pipeline, shared by pack
// commands and proxied tools: ev describes the call (Agent, Action, Payload
// and ArgsSHA256 set), d is the grant checker's Approval decision, argv the
// command line a pack command would run (nil for a proxied tool).
//
// It returns nil when the call may run: ev then carries decision allow and
// the approval that covered it, and the caller executes and audits as for
// any allowed call. Otherwise it has audited the refusal and returns it.
func (g *Gateway) awaitApproval(ctx context.Context, ev *audit.Event, d grantcheck.Decision, args map[string]any, argv []string) *mcp.CallToolResult {
	key := approvals.Key{Agent: ev.Agent, Action: ev.Action, ArgsSHA256: ev.ArgsSHA256, Revision: g.ws.Revision}
	info := approvals.Info{Arguments: g.redactedArgs(args), Argv: g.redactAll(argv), Tier: string(d.Tier), Reason: d.Reason, Payload: ev.Payload}

	if by, ok := g.rules.Match(g.Policy(), d, ev.Agent, ev.Payload.Container, ev.Payload.Member, args); ok {
		g.approvedCall(ev, d, g.approvals.Grant(key, info, by))
		return nil
	}
	opts := approvals.WaitOptions{Wait: g.approvalWait()}
	if tok := progressToken(ctx); tok != nil {
		opts.Progress = g.progressReporter(ctx, tok, opts.Wait)
		opts.ProgressEvery = progressEvery
	}
	if g.ws.Gateway.Approvals.Elicitation && clientElicits(ctx) {
		opts.Opened = func(r approvals.Request) { go g.elicit(ctx, r) }
	}
	res := g.approvals.Wait(ctx, key, info, opts)
	r := res.Request
	switch res.Outcome {
	case approvals.Granted:
		g.approvedCall(ev, d, r)
		return nil
	case approvals.Refused:
		ev.Decision = string(grantcheck.Deny)
		ev.Approval = r.Record()
		ev.Reason = refusedReason(r, g.approvals.TTL())
		return g.refuse(ev, ev.Reason+"; repeat the call to ask again")
	}
	ev.Decision = string(grantcheck.Approval)
	ev.Reason = d.Reason + "; approval pending " + r.ID
	hint := fmt.Sprintf("approval pending %s (%s). An operator approves it with `toolgate approvals approve %s` or in the console at /ui; then repeat the identical call (same arguments) within %s.",
		r.ID, d.Reason, r.ID, g.approvals.TTL())
	if res.Outcome == approvals.Canceled {
		hint = "approval pending " + r.ID + " (the client stopped waiting)"
	}
	return g.refuse(ev, hint)
}

// approvedCall marks ev as allowed under approval r.
func (g *Gateway) approvedCall(ev *audit.Event, d grantcheck.Decision, r approvals.Request) {
	ev.Decision = string(grantcheck.Allow)
	ev.Reason = fmt.Sprintf("%s; approved by %s (%s)", d.Reason, r.DecidedBy, r.ID)
	ev.Approval = r.Record()
}

func refusedReason(r approvals.Request, ttl time.Duration) string {
	if r.State == approvals.Denied {
		s := "approval " + r.ID + " denied by " + r.DecidedBy
		if r.DenyReason != "" {
			s += ": " + r.DenyReason
		}
		return s
	}
	return fmt.Sprintf("approval %s expired (approvals are valid for %s)", r.ID, ttl)
}

// auditDecision records an approver's decision, or an expiry, as its own
// audit event, so the trail shows who said yes or no and when.
func (g *Gateway) auditDecision(r approvals.Request) {
	ev := &audit.Event{
		Agent:      r.Agent,
		Action:     r.Action,
		Decision:   string(r.State),
		Tier:       r.Tier,
		Payload:    r.Payload,
		ArgsSHA256: r.ArgsSHA256,
		Approval:   r.Record(),
	}
	switch r.State {
	case approvals.Approved:
		ev.Reason = "approval " + r.ID + " approved by " + r.DecidedBy
	case approvals.Denied:
		ev.Reason = "approval " + r.ID + " denied by " + r.DecidedBy
		if r.DenyReason != "" {
			ev.Reason += ": " + g.runner.Redact(r.DenyReason)
		}
	case approvals.Expired:
		ev.Reason = "approval " + r.ID + " expired unused"
	}
	if err := g.appendAudit(ev); err != nil {
		g.log.Error("audit append failed for an approval decision", "approval", r.ID, "err", err)
	}
}

// redactedArgs renders the arguments for people, credential values replaced.
func (g *Gateway) redactedArgs(args map[string]any) json.RawMessage {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	red := g.runner.Redact(string(b))
	if !json.Valid([]byte(red)) {
		b, _ = json.Marshal(red)
		return b
	}
	return json.RawMessage(red)
}

func (g *Gateway) redactAll(argv []string) []string {
	if argv == nil {
		return nil
	}
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = g.runner.Redact(a)
	}
	return out
}

// previewArgv is the command line a pack command call would run, shown to
// the approver; nil when the arguments do not build one (the call will fail
// later with the reason).
func previewArgv(cmd *workspace.Command, args map[string]any) []string {
	if cmd == nil {
		return nil
	}
	argv, err := packs.BuildArgv(cmd, args)
	if err != nil {
		return nil
	}
	return argv
}

type callMetaKey struct{}

// callMetaMiddleware keeps the request's _meta (its progress token) in the
// context, so the approval step can report progress on the right request.
func callMetaMiddleware(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.Meta != nil {
			ctx = context.WithValue(ctx, callMetaKey{}, req.Params.Meta)
		}
		return next(ctx, req)
	}
}

func progressToken(ctx context.Context) mcp.ProgressToken {
	m, _ := ctx.Value(callMetaKey{}).(*mcp.Meta)
	if m == nil {
		return nil
	}
	return m.ProgressToken
}

// progressReporter sends notifications/progress while a call waits: the
// seconds waited out of the wait, and how to approve.
func (g *Gateway) progressReporter(ctx context.Context, tok mcp.ProgressToken, wait time.Duration) func(approvals.Request, time.Duration) {
	srv := server.ServerFromContext(ctx)
	return func(r approvals.Request, elapsed time.Duration) {
		if srv == nil {
			return
		}
		err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": tok,
			"progress":      elapsed.Seconds(),
			"total":         wait.Seconds(),
			"message":       fmt.Sprintf("waiting for approval %s: toolgate approvals approve %s", r.ID, r.ID),
		})
		if err != nil {
			g.log.Debug("progress notification not sent", "approval", r.ID, "err", err)
		}
	}
}

// clientElicits reports whether the calling client declared elicitation
// and speaks a protocol version that still lets a server send it requests
// mid-call (up to 2025-11-25; later versions replace them with multi
// round-trip results, which this approver does not use yet).
func clientElicits(ctx context.Context) bool {
	if mcp.IsModernProtocol(server.RequestProtocolVersion(ctx)) {
		return false
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok {
		return false
	}
	_, can := server.ClientSessionFromContext(ctx).(server.SessionWithElicitation)
	return can && s.GetClientCapabilities().Elicitation != nil
}

// elicit asks the harness's user to approve r (elicitation/create) and
// records the answer with the broker; an operator may decide first, in
// which case the answer is ignored.
func (g *Gateway) elicit(ctx context.Context, r approvals.Request) {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, g.approvalWait())
	defer cancel()
	what := r.Action
	if len(r.Argv) > 0 {
		b, _ := json.Marshal(r.Argv)
		what += " running " + string(b)
	}
	res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params: mcp.ElicitationParams{
			Message: fmt.Sprintf("toolgate: agent %q asks to call %s with arguments %s (%s). Approve this one call?", r.Agent, what, r.Arguments, r.Reason),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Approve this call once"},
				},
				"required": []string{"approve"},
			},
		},
	})
	if err != nil {
		g.log.Debug("elicitation failed; the request waits for an operator", "approval", r.ID, "err", err)
		return
	}
	approve := false
	if res.Action == mcp.ElicitationResponseActionAccept {
		if m, ok := res.Content.(map[string]any); ok {
			approve, _ = m["approve"].(bool)
		}
	}
	if approve {
		_, err = g.approvals.Approve(r.ID, approvals.ByElicitation)
	} else if res.Action != mcp.ElicitationResponseActionCancel {
		_, err = g.approvals.Deny(r.ID, approvals.ByElicitation, "the user declined")
	}
	if err != nil {
		g.log.Debug("elicitation answer not recorded", "approval", r.ID, "err", err)
	}
}
