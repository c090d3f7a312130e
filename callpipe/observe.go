package callpipe

import (
	"context"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
)

// Observer is told how each call ended, once per Pipeline.Call, just
// before its answer is returned: the gateway hangs its metrics and the
// decision on its trace span here, so this package imports neither. ctx is
// the call's own context (the caller's span is in it). CallDone runs on
// the call's goroutine and must not block.
type Observer interface {
	CallDone(ctx context.Context, c CallStats)
}

// CallStats is what an Observer learns about one call. It carries no
// arguments and no reason: they may quote what the agent sent.
type CallStats struct {
	// Agent is the identity the call was made under.
	Agent    string
	Provider Provider
	Surface  string
	Tool     string
	// Decision is the decision event's: allow, deny or approval (held for
	// approval: pending, a task, or the caller's user asked).
	Decision string
	// Failed, when not "", says why a call did not end well although it
	// was allowed (the run failed, the tool reported an error) or why its
	// answer is a refusal nobody decided (the audit could not be written);
	// redacted.
	Failed string
	// Duration is the whole call, approval waits included.
	Duration time.Duration
}

// callStats summarises one finished call for the Observer.
func callStats(req Request, ev *audit.Event, res Result, d time.Duration) CallStats {
	c := CallStats{Agent: req.Agent, Provider: req.Provider, Surface: req.Surface, Tool: req.Name, Failed: res.failed, Duration: d, Decision: string(grantcheck.Deny)}
	if req.Call != nil {
		c.Tool = req.Call.Name
	}
	if ev != nil {
		c.Decision = ev.Decision
	}
	return c
}
