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
	"github.com/toolgate/toolgate/redact"
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
// def is the digest of the tool's definition (Definer), bound by the
// approval with the revision and its generation.
func (p *Pipeline) approve(ctx context.Context, snap *Snapshot, req Request, d grantcheck.Decision, ev *audit.Event, preview []string, def string) (Result, bool) {
	call := req.Call
	key := approvals.Key{Agent: req.Agent, Action: ev.Action, ArgsSHA256: call.Digest, Revision: snap.Revision, Generation: snap.Generation, Definition: def}
	info := approvals.Info{
		Argv: p.redactAll(preview),
		Tier: string(d.Tier), Reason: ev.Reason, Payload: ev.Payload,
	}
	if args, ok := p.redactor.JSON(call.ArgsJSON); ok {
		info.Arguments = args
	} else {
		// A credential outside any string (a number): show the text redacted.
		info.Arguments = json.RawMessage(strictjson.AppendString(nil, p.redactor.Redact(string(call.ArgsJSON))))
	}
	if preview == nil {
		info.Argv = nil
	}
	if by := snap.ruleApprover(d, req.Agent, req.Surface, call.Name, call.Args); by != "" {
		approvedCall(ev, d, p.approvals.Grant(key, info, by), p.redactor)
		return Result{}, false
	}
	var res approvals.Result
	if req.Hold != nil {
		var held Result
		var done bool
		if res, held, done = p.hold(ctx, snap, req, d, ev, key, info); done {
			return held, true
		}
	}
	opts := approvals.WaitOptions{Wait: snap.Wait, ProgressEvery: ProgressEvery}
	if req.Wait > 0 {
		opts.Wait = req.Wait
	}
	if opts.Wait <= 0 {
		opts.Wait = approvals.DefaultWait
	}
	if req.Asker != nil {
		asker := req.Asker
		wait := opts.Wait
		opts.Progress = func(r approvals.Request, elapsed time.Duration) {
			asker.Progress(ctx, elapsed.Seconds(), wait.Seconds(), fmt.Sprintf("waiting for approval %s: %s", r.ID, approveHint(snap, r.ID)))
		}
		// The caller's own user may approve only a cautious write, and only
		// where the workspace allows it: a strict call is never approved by
		// the client that makes it.
		if userMayApprove(snap, d) {
			opts.Opened = func(r approvals.Request) { go p.elicit(ctx, asker, r, opts.Wait) }
		}
	}
	if res.Outcome == "" || res.Outcome == approvals.StillPending {
		res = p.approvals.Wait(ctx, key, info, opts)
	}
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
		if ctx.Err() != nil {
			msg = "the client went away before the approval could be requested"
		}
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
	hint := fmt.Sprintf("approval pending %s (%s). An operator approves it with %s; then repeat the identical call (same arguments) within %s.",
		r.ID, p.redactor.Redact(d.Reason), approveHint(snap, r.ID), p.approvals.TTL())
	if res.Outcome == approvals.Canceled {
		hint = "approval pending " + r.ID + " (the client stopped waiting)"
	}
	return p.refuse(ctx, ev, hint), true
}

// approvedCall marks ev as allowed under approval r.
func approvedCall(ev *audit.Event, d grantcheck.Decision, r approvals.Request, red *redact.Redactor) {
	ev.Decision = string(grantcheck.Allow)
	ev.Reason = fmt.Sprintf("%s; approved by %s (%s)", red.Redact(d.Reason), r.DecidedBy, r.ID)
	ev.Approval = r.Record()
}

func refusedReason(r approvals.Request, ttl time.Duration, red *redact.Redactor) string {
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
// red (nil: nothing to redact) redacts the approver's deny reason.
func ApprovalEvent(r approvals.Request, red *redact.Redactor) *audit.Event {
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

// userMayApprove reports whether the caller's own user may approve the
// call: only a cautious write, only where approvals.elicitation is on.
func userMayApprove(snap *Snapshot, d grantcheck.Decision) bool {
	return snap.Elicitation && d.Tier == workspace.TierCautious && d.Effects != workspace.EffectRead
}

// hold offers a call that needs approval to req.Hold: a task when the
// client takes tasks, else (for what the caller's user may approve) an
// input-required result asking that user. done reports that the client
// has its answer (the held result, or a refusal); otherwise the call
// waits as usual.
func (p *Pipeline) hold(ctx context.Context, snap *Snapshot, req Request, d grantcheck.Decision, ev *audit.Event, key approvals.Key, info approvals.Info) (approvals.Result, Result, bool) {
	// Open (or join) the request without waiting for it. Anything but
	// "still pending" (approved already, denied, failed) is the approval
	// step's to report, as if it had waited.
	res := p.approvals.Wait(ctx, key, info, approvals.WaitOptions{Wait: time.Nanosecond})
	if res.Outcome != approvals.StillPending {
		return res, Result{}, false
	}
	r := res.Request
	pending := func(how string) {
		ev.Decision = string(grantcheck.Approval)
		ev.Reason = ev.Reason + "; approval pending " + r.ID + "; " + how
	}
	resume := func(bctx context.Context) Result {
		again := req
		again.Hold = nil
		again.Wait = p.approvals.TTL()
		again.heldUnder = snap
		return p.Call(bctx, again)
	}
	if result, ok := req.Hold.Task(ctx, r, resume); ok {
		pending("held as a task")
		if err := p.journal.Append(ev); err != nil {
			return res, auditFailure(err), true
		}
		return res, Result{JSON: result}, true
	}
	if userMayApprove(snap, d) && p.sealer != nil {
		state, err := p.sealer.Seal(StateClaims{Agent: req.Agent, Action: ev.Action, ArgsSHA256: req.Call.Digest,
			Revision: snap.Revision, Generation: snap.Generation, ApprovalID: r.ID, Expires: r.Expires.Unix()})
		if err == nil {
			if result, ok := req.Hold.AskUser(ctx, r, p.question(r), state); ok {
				pending("the caller's user was asked")
				if err := p.journal.Append(ev); err != nil {
					return res, auditFailure(err), true
				}
				return res, Result{JSON: result}, true
			}
		}
	}
	return res, Result{}, false
}

// question is what the caller's user is asked about approval r.
func (p *Pipeline) question(r approvals.Request) string {
	what := r.Action
	if len(r.Argv) > 0 {
		b, _ := json.Marshal(r.Argv)
		what += " running " + string(b)
	}
	return fmt.Sprintf("toolgate: agent %q asks to call %s with arguments %s (%s). Approve this one call?", r.Agent, what, r.Arguments, r.Reason)
}

// userAnswered takes the caller's user's answer from a retry carrying
// toolgate's own requestState: the state must open (not altered), bind
// exactly this call under this revision, and name an approval still
// pending (a replayed state finds it used and is refused). The answer
// approves or denies that approval; the usual wait then consumes it.
func (p *Pipeline) userAnswered(ctx context.Context, snap *Snapshot, req Request, d grantcheck.Decision, ev *audit.Event, state string, answer any) (Result, bool) {
	refuse := func(why string) (Result, bool) {
		ev.Decision, ev.Reason = string(grantcheck.Deny), why
		return p.refuse(ctx, ev, why), true
	}
	if p.sealer == nil {
		return refuse("requestState: this gateway issues none; call again without it")
	}
	c, err := p.sealer.Open(state, time.Now())
	if err != nil {
		return refuse("requestState refused: " + err.Error())
	}
	if c.Agent != req.Agent || c.Action != ev.Action || c.ArgsSHA256 != req.Call.Digest {
		return refuse("requestState refused: it was issued for another call (agent, tool or arguments differ)")
	}
	if c.Revision != snap.Revision || c.Generation != snap.Generation {
		return refuse(fmt.Sprintf("requestState refused: the workspace was reloaded since it was issued (generation %d, now %s); call again without it to have the call decided under the revision in force",
			c.Generation, snap.describe()))
	}
	if !userMayApprove(snap, d) {
		return refuse("requestState refused: this call may not be approved by the caller's own user")
	}
	r, ok := p.approvals.Get(c.ApprovalID)
	if !ok || r.State != approvals.Pending {
		return refuse("requestState refused: approval " + c.ApprovalID + " is no longer pending (the state was used already)")
	}
	ans, _ := answer.(map[string]any)
	action, _ := ans["action"].(string)
	content, _ := ans["content"].(map[string]any)
	switch approve, _ := content["approve"].(bool); {
	case action == "accept" && approve:
		_, err = p.approvals.Approve(r.ID, approvals.ByElicitation)
	case action == "accept", action == "decline":
		_, err = p.approvals.Deny(r.ID, approvals.ByElicitation, "the user declined")
	}
	if err != nil {
		p.log.Debug("elicitation answer not recorded", "approval", r.ID, "err", err)
	}
	return Result{}, false
}
