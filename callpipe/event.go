package callpipe

import (
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/strictjson"
)

// Verbs of audit actions about a tool: "<provider>:<verb>:<surface>:<member>".
const (
	VerbCall      = "call"
	VerbJobEnd    = "job-end"
	VerbJobCancel = "job-cancel"
	VerbTask      = "task"
)

// Decisions of outcome events (the decision event says allow; its outcome
// event says how the run ended).
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
)

// NewEvent is the one constructor of audit events about a tool: the
// action label and the structured payload are always derived the same
// way, so queries on either agree.
func NewEvent(agent string, provider Provider, verb, surface, member string) *audit.Event {
	action := string(provider) + ":" + verb + ":" + surface
	if member != "" {
		action += ":" + member
	}
	return &audit.Event{
		Agent:   agent,
		Action:  action,
		Payload: audit.Payload{Provider: string(provider), Container: surface, Member: member},
	}
}

// newCallEvent starts the decision event of req.
func (p *Pipeline) newCallEvent(req Request, name string, snap *Snapshot) *audit.Event {
	ev := NewEvent(req.Agent, req.Provider, VerbCall, req.Surface, name)
	ev.Revision = snap.Revision
	ev.TraceID = req.TraceID
	if req.Call != nil {
		ev.ArgsSHA256 = req.Call.Digest
		if snap.AuditArguments {
			ev.Arguments = p.redactedArguments(req.Call)
		}
	} else {
		ev.ArgsSHA256 = audit.ArgsDigest(nil)
	}
	return ev
}

// outcomeEvent is the event that follows decision once its run ended.
func outcomeEvent(decision *audit.Event, out Outcome, r *redact.Redactor) *audit.Event {
	ev := &audit.Event{
		Agent:      decision.Agent,
		Action:     decision.Action,
		Decision:   OutcomeCompleted,
		Tier:       decision.Tier,
		Payload:    decision.Payload,
		ArgsSHA256: decision.ArgsSHA256,
		Approval:   decision.Approval,
		Revision:   decision.Revision,
		TraceID:    decision.TraceID,
	}
	seq := decision.Seq
	ev.Of = &seq
	if out.Argv != nil {
		ev.Argv = make([]string, len(out.Argv))
		for i, a := range out.Argv {
			ev.Argv[i] = r.Redact(a)
		}
	}
	dur := out.Duration.Milliseconds()
	ev.Exit, ev.DurationMS, ev.OutputBytes, ev.Truncated = out.Exit, &dur, out.OutputBytes, out.Truncated
	if out.Error != "" {
		ev.Decision = OutcomeFailed
		ev.Error = r.Redact(out.Error)
	}
	ev.Reason = decision.Reason
	if out.Note != "" {
		ev.Reason = strings.TrimPrefix(ev.Reason+"; "+out.Note, "; ")
	}
	return ev
}

// redactedArguments are a call's arguments as an operator or the audit
// may see them: every credential redacted.
func (p *Pipeline) redactedArguments(call *Call) json.RawMessage {
	if args, ok := p.redactor.JSON(call.ArgsJSON); ok {
		return args
	}
	// A credential outside any string (a number): show the text redacted.
	return json.RawMessage(strictjson.AppendString(nil, p.redactor.Redact(string(call.ArgsJSON))))
}
