package callpipe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/strictjson"
	"github.com/toolgate/toolgate/workspace"
)

// ProgressEvery is how often a waiting call tells its caller it still
// waits, when the caller asked for progress.
const ProgressEvery = 2 * time.Second

// approve is the approval step: a rule, an operator, or (for cautious
// writes only, where the workspace allows it) the caller's own user. It
// reports refused with the result when the call may not run; otherwise ev
// now records the approval that covers the call.
func (p *Pipeline) approve(ctx context.Context, snap *Snapshot, req Request, d grantcheck.Decision, ev *audit.Event, preview []string) (Result, bool) {
	call := req.Call
	key := approvals.Key{Agent: req.Agent, Action: ev.Action, ArgsSHA256: call.Digest, Revision: snap.Revision}
	info := approvals.Info{
		Argv: p.redactAll(preview),
		Tier: string(d.Tier), Reason: ev.Reason, Payload: ev.Payload,
	}
	if args, ok := redactDoc(p.redactor, call.ArgsJSON); ok {
		info.Arguments = args
	} else {
		// A credential outside any string (a number): show the text redacted.
		info.Arguments = json.RawMessage(strictjson.AppendString(nil, p.redactor.Redact(string(call.ArgsJSON))))
	}
	if preview == nil {
		info.Argv = nil
	}
	if by, ok := snap.Rules.Match(snap.Policy, d, req.Agent, req.Surface, call.Name, call.Args); ok {
		approvedCall(ev, d, p.approvals.Grant(key, info, by), p.redactor)
		return Result{}, false
	}
	opts := approvals.WaitOptions{Wait: snap.Wait, ProgressEvery: ProgressEvery}
	if opts.Wait <= 0 {
		opts.Wait = approvals.DefaultWait
	}
	if req.Asker != nil {
		asker := req.Asker
		wait := opts.Wait
		opts.Progress = func(r approvals.Request, elapsed time.Duration) {
			asker.Progress(ctx, elapsed.Seconds(), wait.Seconds(), fmt.Sprintf("waiting for approval %s: toolgate approvals approve %s", r.ID, r.ID))
		}
		// The caller's own user may approve only a cautious write, and only
		// where the workspace allows it: a strict call is never approved by
		// the client that makes it.
		if snap.Elicitation && d.Tier == workspace.TierCautious && d.Effects != workspace.EffectRead {
			opts.Opened = func(r approvals.Request) { go p.elicit(ctx, asker, r, opts.Wait) }
		}
	}
	res := p.approvals.Wait(ctx, key, info, opts)
	r := res.Request
	switch res.Outcome {
	case approvals.Granted:
		approvedCall(ev, d, r, p.redactor)
		return Result{}, false
	case approvals.Failed:
		// The store could not hold the request (the agent's cap of pending
		// approvals, or the store is down): refused, never run.
		ev.Decision = string(grantcheck.Deny)
		msg := "the approval could not be requested"
		if res.Err != nil {
			msg += ": " + res.Err.Error()
		}
		ev.Reason = p.redactor.Redact(msg)
		return p.refuse(ctx, ev, ev.Reason), true
	case approvals.Refused:
		ev.Decision = string(grantcheck.Deny)
		ev.Approval = r.Record()
		ev.Reason = refusedReason(r, p.approvals.TTL(), p.redactor)
		return p.refuse(ctx, ev, ev.Reason+"; repeat the call to ask again"), true
	}
	ev.Decision = string(grantcheck.Approval)
	ev.Reason = ev.Reason + "; approval pending " + r.ID
	hint := fmt.Sprintf("approval pending %s (%s). An operator approves it with `toolgate approvals approve %s` or in the console at /ui; then repeat the identical call (same arguments) within %s.",
		r.ID, p.redactor.Redact(d.Reason), r.ID, p.approvals.TTL())
	if res.Outcome == approvals.Canceled {
		hint = "approval pending " + r.ID + " (the client stopped waiting)"
	}
	return p.refuse(ctx, ev, hint), true
}

// approvedCall marks ev as allowed under approval r.
func approvedCall(ev *audit.Event, d grantcheck.Decision, r approvals.Request, red Redactor) {
	ev.Decision = string(grantcheck.Allow)
	ev.Reason = fmt.Sprintf("%s; approved by %s (%s)", red.Redact(d.Reason), r.DecidedBy, r.ID)
	ev.Approval = r.Record()
}

func refusedReason(r approvals.Request, ttl time.Duration, red Redactor) string {
	if r.State == approvals.Denied {
		s := "approval " + r.ID + " denied by " + r.DecidedBy
		if r.DenyReason != "" {
			s += ": " + red.Redact(r.DenyReason)
		}
		return s
	}
	return fmt.Sprintf("approval %s expired (approvals are valid for %s)", r.ID, ttl)
}

// elicit asks the caller's user to approve r and records the answer with
// the broker; an operator may decide first, and then the answer is moot.
func (p *Pipeline) elicit(ctx context.Context, asker Asker, r approvals.Request, wait time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	what := r.Action
	if len(r.Argv) > 0 {
		b, _ := json.Marshal(r.Argv)
		what += " running " + string(b)
	}
	answer, err := asker.Elicit(ctx, fmt.Sprintf("toolgate: agent %q asks to call %s with arguments %s (%s). Approve this one call?", r.Agent, what, r.Arguments, r.Reason))
	if err != nil {
		p.log.Debug("elicitation not answered; the request waits for an operator", "approval", r.ID, "err", err)
		return
	}
	switch answer {
	case Approved:
		_, err = p.approvals.Approve(r.ID, approvals.ByElicitation)
	case Declined:
		_, err = p.approvals.Deny(r.ID, approvals.ByElicitation, "the user declined")
	}
	if err != nil {
		p.log.Debug("elicitation answer not recorded", "approval", r.ID, "err", err)
	}
}

// ApprovalEvent is the audit event of an approver's decision or an
// expiry, so the trail shows who said yes or no, and when.
func ApprovalEvent(r approvals.Request, red Redactor) *audit.Event {
	ev := &audit.Event{
		Agent:      r.Agent,
		Action:     r.Action,
		Decision:   string(r.State),
		Tier:       r.Tier,
		Payload:    r.Payload,
		ArgsSHA256: r.ArgsSHA256,
		Approval:   r.Record(),
		Revision:   r.Revision,
	}
	switch r.State {
	case approvals.Approved:
		ev.Reason = "approval " + r.ID + " approved by " + r.DecidedBy
	case approvals.Denied:
		ev.Reason = "approval " + r.ID + " denied by " + r.DecidedBy
		if r.DenyReason != "" {
			ev.Reason += ": " + red.Redact(r.DenyReason)
		}
	case approvals.Expired:
		ev.Reason = "approval " + r.ID + " expired unused"
	}
	return ev
}

// ErrNoElicitation is what an Asker returns when its client cannot be
// asked (it declared no elicitation, or its protocol has no way to).
var ErrNoElicitation = errors.New("the client cannot be asked")
