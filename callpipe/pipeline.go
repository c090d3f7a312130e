// Package callpipe is toolgate's one call pipeline, shared by
// pack commands and proxied MCP tools: identity, grant, requires and
// scopes, schema, constraints, tier, approval, the audit-failing gate,
// the write-ahead decision event, execution, the outcome event. Every
// transport (streamable HTTP, stdio, either protocol era) parses a
// tools/call with ParseCall and hands it to Pipeline.Call; executors and
// the asker (progress, elicitation) are small interfaces the transport and
// the gateway supply. The package imports no MCP library: results are
// built as raw JSON.
//
// Trust boundaries: Request.Agent is the identity the transport bound
// (token, JWT or launch flag) — never anything from the request body.
// Request.Call is untrusted but strictly parsed; it is the only form of
// the request that is decided, digested, audited and executed, so what
// was decided is what runs. Reasons may quote argument values: they are
// redacted before they are audited or logged, and logged at debug only.
package callpipe

import (
	"context"
	"log/slog"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/tiers"
)

// DeniedPrefix starts the text of every refusal, proxied or local, so
// harnesses and people recognise a governance decision at a glance.
const DeniedPrefix = "DENIED: "

// Provider says what kind of surface a call is for; it names the audit
// action's first part and the payload's provider.
type Provider string

// The two providers.
const (
	Command Provider = "command" // a command pack
	MCP     Provider = "mcp"     // a proxied MCP server
)

// Snapshot is one revision of the workspace as the pipeline decides with
// it. A call loads it once and finishes under it, whatever reloads
// meanwhile.
type Snapshot struct {
	Policy   *grantcheck.Policy
	Rules    *approvals.Rules
	Revision string
	// Generation numbers the revisions a deployment has had in force
	// (state.Store.RecordRevision); approvals and requestStates bind it,
	// so a file reverted to older content revives none of them.
	Generation int64
	// Wait is how long a call waits for an approval (approvals.wait).
	Wait time.Duration
	// Elicitation lets the caller's own user approve cautious writes
	// (approvals.elicitation); never strict ones.
	Elicitation bool
	// ApproveHint, when set, names how an operator approves request id
	// from where the call is held (e.g. "`toolgate approvals -w WS approve
	// ID`"); nil uses the plain CLI command.
	ApproveHint func(id string) string
	// Lock is toolgate.lock in force (nil: definitions are not pinned) and
	// Live the digest of a tool's definition as it is served now ("" when
	// unknown); a tool whose live digest is not its pin is refused.
	Lock *pin.Lock
	Live func(surface, member string) pin.Digest
}

// Request is one tools/call on its way through the pipeline.
type Request struct {
	// Agent is the identity the transport bound; "" is refused.
	Agent    string
	Provider Provider
	Surface  string
	// Call is the parsed call; nil when ParseErr says why it is not.
	Call *Call
	// ParseErr refuses a malformed call (still audited); Name is the tool
	// name as far as it could be read, for the audit.
	ParseErr error
	Name     string
	// Exec runs an allowed call; Asker reaches the caller while it waits
	// (nil: no progress, no elicitation).
	Exec  Executor
	Asker Asker
	// TraceID is the request's trace id, when it carried trace context.
	TraceID string
	// Hold, when set, can take a call that needs approval off the
	// request (a 2026-07-28 client: a task, or an input-required result
	// asking its own user). Nil: the call waits, as in the session era.
	Hold Holder
	// Wait overrides the snapshot's approval wait (a task's resumed call
	// waits as long as the approval may take).
	Wait time.Duration
	// Protocol is the MCP protocol version the call came in (for the log).
	Protocol string
	// TokenScoped is set when the caller authenticated with an access
	// token (JWT identity): the call may then use only those of the
	// agent's declared scopes that TokenScopes (the token's scope claim)
	// also grant. A token without a scope claim grants none.
	TokenScoped bool
	TokenScopes []string
	// heldUnder, set on a task's resumed call, is the snapshot the call
	// was held under: the resumed call waits for the very approval the
	// task names, and is decided again against the revision in force
	// when it is about to run (redecide).
	heldUnder *Snapshot
}

// Holder takes a call that needs approval off its request, for clients
// that can come back for it. Both methods report false when they do not
// apply (the client did not declare what they need).
type Holder interface {
	// Task makes the held call a task and returns the result the client
	// gets now (the task handle); resume runs the call to its end — waits
	// for the approval, executes — and the holder calls it in the
	// background with a context of its own, storing what it returns.
	Task(ctx context.Context, approval approvals.Request, resume func(ctx context.Context) Result) ([]byte, bool)
	// AskUser returns an input-required result asking the caller's own
	// user to approve, carrying state (sealed) for the retry.
	AskUser(ctx context.Context, approval approvals.Request, question, state string) ([]byte, bool)
}

// Result is what the transport sends back: a CallToolResult object, or a
// downstream server's JSON-RPC error object passed through as is.
type Result struct {
	JSON     []byte
	RPCError []byte
	// Denied is true for a refusal by toolgate (JSON is a DENIED result).
	Denied bool
	// failed says why an allowed call did not end well (the run failed,
	// or an event could not be audited), for the Observer; "" otherwise.
	failed string
}

// Executor turns an allowed call into a run. Prepare checks what only the
// executor can — the argv of a pack command, that its binary is still
// there — and an error refuses the call before anyone is asked to approve.
type Executor interface {
	Prepare(ctx context.Context, call *Call) (Run, error)
}

// Run is a prepared call. Exactly one of Execute or Discard is called.
type Run interface {
	// Preview is what an approver is shown beside the arguments: a pack
	// command's argv; nil for a proxied tool.
	Preview() []string
	// Execute runs the call. decision is (a copy of) its decision event,
	// already recorded, which later events about the call (a background
	// job's end) refer to by its Seq.
	Execute(ctx context.Context, decision audit.Event) Outcome
	Discard()
}

// Outcome is how a run ended: the result for the client and the facts the
// audit records. Strings are redacted by the pipeline.
type Outcome struct {
	Result   []byte
	RPCError []byte
	Argv     []string
	Exit     *int
	Duration time.Duration
	// OutputBytes and Truncated are set when output was produced.
	OutputBytes *int64
	Truncated   *bool
	// Error describes a failure for the audit; the result already tells
	// the client.
	Error string
	// Note is appended to the outcome event's reason (a background job's
	// id).
	Note string
}

// Asker reaches the caller of a waiting call through the transport that
// carried it.
type Asker interface {
	// Progress tells the caller the call still waits; it reports false
	// when the caller asked for no progress.
	Progress(ctx context.Context, done, total float64, message string) bool
	// Elicit asks the caller's user a yes/no question; ErrNoElicitation
	// when the client cannot be asked.
	Elicit(ctx context.Context, message string) (Answer, error)
}

// Answer is the user's reply to an elicitation.
type Answer int

// The answers.
const (
	Declined  Answer = iota // the user said no
	Approved                // the user said yes
	Cancelled               // the user dismissed the question
)

// Options are the pipeline's dependencies.
type Options struct {
	// Snapshot returns the workspace revision in force.
	Snapshot  func() *Snapshot
	Approvals *approvals.Broker
	Journal   *Journal
	// Redactor removes credential values from what the pipeline returns,
	// audits and logs; nil redacts nothing.
	Redactor *redact.Redactor
	// Sealer seals the requestState toolgate issues; nil: no call is
	// held by asking the caller's user.
	Sealer *Sealer
	// Observer, when set, is told how every call ended (metrics, the
	// gateway's trace span).
	Observer Observer
	Logger   *slog.Logger
}

// Pipeline decides, executes and audits tools/calls. It is safe for
// concurrent use and holds no per-call state.
type Pipeline struct {
	snapshot  func() *Snapshot
	approvals *approvals.Broker
	journal   *Journal
	redactor  *redact.Redactor
	sealer    *Sealer
	observer  Observer
	log       *slog.Logger
}

// New returns a pipeline over its dependencies.
func New(opts Options) *Pipeline {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{snapshot: opts.Snapshot, approvals: opts.Approvals, journal: opts.Journal, redactor: opts.Redactor, sealer: opts.Sealer, observer: opts.Observer, log: opts.Logger}
}

// Journal returns the audit journal every event of the gateway goes to.
func (p *Pipeline) Journal() *Journal { return p.journal }

// Call runs one tools/call through every stage and returns what the
// client gets. It never panics on hostile input and always audits: a
// refusal is one event; an allowed call is a decision event written
// before anything runs and an outcome event after.
func (p *Pipeline) Call(ctx context.Context, req Request) Result {
	if p.observer == nil {
		return p.call(ctx, req, nil)
	}
	start := time.Now()
	var ev *audit.Event
	res := p.call(ctx, req, &ev)
	p.observer.CallDone(ctx, callStats(req, ev, res, time.Since(start)))
	return res
}

// call is Call; *evp is set to the call's decision event as soon as it
// exists (evp may be nil).
func (p *Pipeline) call(ctx context.Context, req Request, evp **audit.Event) Result {
	snap := req.heldUnder
	if snap == nil {
		snap = p.snapshot()
	}
	ctx = withSnapshot(ctx, snap)
	name := req.Name
	if req.Call != nil {
		name = req.Call.Name
	}
	ev := p.newCallEvent(req, name, snap)
	if evp != nil {
		*evp = ev
	}
	if req.ParseErr != nil || req.Call == nil {
		msg := "malformed tools/call"
		if req.ParseErr != nil {
			msg += ": " + req.ParseErr.Error()
		}
		ev.Decision, ev.Reason = string(grantcheck.Deny), p.redactor.Redact(msg)
		// A call that cannot be read is a protocol error: the client gets
		// Invalid params (still with the DENIED text), as a server would
		// answer it.
		if err := p.journal.Append(ev); err != nil {
			return auditFailure(err)
		}
		return Result{RPCError: jsonrpc.ErrorObject(jsonrpc.CodeInvalidParams, "Invalid params: "+DeniedPrefix+ev.Reason), Denied: true}
	}
	// A retry answering toolgate's own question: the answer is the
	// approval step's; the downstream sees the call without it.
	call, ownState, ownAnswer := req.Call.ownInput()
	req.Call = call
	d := decide(ctx, snap, req, call)
	ev.Decision, ev.Tier, ev.Payload.Effects = string(d.Outcome), string(d.Tier), string(d.Effects)
	ev.Reason = p.redactor.Redact(d.Reason)
	// An allowed call is logged at debug only: the audit holds every
	// decision, and a log line per call costs a tenth of the proxied call's
	// CPU. A refusal or a hold, what an operator looks for, stays at info.
	level := slog.LevelInfo
	if d.Outcome == tiers.Allow {
		level = slog.LevelDebug
	}
	if p.log.Enabled(ctx, level) {
		p.log.Log(ctx, level, "decision", "agent", req.Agent, "action", ev.Action, "decision", d.Outcome, "tier", d.Tier, "protocol", req.Protocol)
	}
	p.log.Debug("decision reason", "agent", req.Agent, "action", ev.Action, "reason", ev.Reason)
	if d.Outcome == tiers.Deny {
		return p.refuse(ctx, ev, ev.Reason)
	}
	run, err := req.Exec.Prepare(ctx, call)
	if err != nil {
		ev.Decision, ev.Reason = string(grantcheck.Deny), p.redactor.Redact(err.Error())
		return p.refuse(ctx, ev, ev.Reason)
	}
	if ownState != "" && d.Outcome != tiers.Approval {
		run.Discard()
		ev.Decision, ev.Reason = string(grantcheck.Deny), "the call carries an approval answer, but needs no approval now (the workspace changed); call again without requestState"
		return p.refuse(ctx, ev, ev.Reason)
	}
	if d.Outcome == tiers.Approval {
		if ownState != "" {
			if r, refused := p.userAnswered(ctx, snap, req, d, ev, ownState, ownAnswer); refused {
				run.Discard()
				return r
			}
		}
		def := definitionOf(req.Exec, call.Name)
		if r, refused := p.approve(ctx, snap, req, d, ev, run.Preview(), def); refused {
			run.Discard()
			return r
		}
		if r, refused := p.redecide(ctx, snap, req, ev, def); refused {
			run.Discard()
			return r
		}
	}
	if failing := p.journal.Failing(); failing != "" {
		run.Discard()
		ev.Decision = string(grantcheck.Deny)
		ev.Reason = "the audit log is failing (" + failing + "); calls are refused until it can be written"
		return p.refuse(ctx, ev, ev.Reason)
	}
	// Write-ahead: no side effect without a durable decision.
	if preview := run.Preview(); preview != nil {
		ev.Argv = p.redactAll(preview)
	}
	if err := p.journal.Append(ev); err != nil {
		run.Discard()
		return auditFailure(err)
	}
	start := time.Now()
	out := run.Execute(ctx, *ev)
	if out.Duration == 0 {
		out.Duration = time.Since(start)
	}
	return p.finish(ev, out)
}

// finish writes the outcome event of an executed call and returns its
// result (redacted). The outcome is in the audit before the result is
// returned; its fsync may follow (Journal.AppendOutcome).
func (p *Pipeline) finish(decision *audit.Event, out Outcome) Result {
	ev := outcomeEvent(decision, out, p.redactor)
	if err := p.journal.AppendOutcome(ev); err != nil {
		return auditFailure(err)
	}
	res := Result{failed: ev.Error}
	if out.Result != nil {
		res.JSON = p.redactJSON(out.Result)
	}
	if out.RPCError != nil {
		res.RPCError = p.redactJSON(out.RPCError)
	}
	if res.JSON == nil && res.RPCError == nil {
		res.JSON = ErrorResult(decision.Payload.Container + ":" + decision.Payload.Member + " produced no result")
	}
	return res
}

// refuse audits a refusal and returns it as the tool result every client
// sees: isError with the DENIED prefix.
func (p *Pipeline) refuse(_ context.Context, ev *audit.Event, reason string) Result {
	if err := p.journal.Append(ev); err != nil {
		return auditFailure(err)
	}
	return Result{JSON: ErrorResult(DeniedPrefix + reason), Denied: true}
}

func auditFailure(err error) Result {
	msg := "the audit log could not be written, so the call is refused: " + err.Error()
	return Result{JSON: ErrorResult(DeniedPrefix + msg), Denied: true, failed: msg}
}

func (p *Pipeline) redactAll(argv []string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = p.redactor.Redact(a)
	}
	return out
}

// redactJSON removes credential values from a JSON document for the
// client, however they are escaped (package redact). A document that cannot be
// redacted safely is replaced by an error result rather than sent.
func (p *Pipeline) redactJSON(b []byte) []byte {
	red, ok := p.redactor.JSON(b)
	if !ok {
		return ErrorResult("the result held a credential and was withheld")
	}
	return red
}
