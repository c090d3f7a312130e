package approvals

import (
	"context"
	"errors"
	"time"
)

// DefaultMaxPending caps the pending requests of one agent when
// Options.MaxPendingPerAgent is zero (gateway.approvals.max_pending).
const DefaultMaxPending = 32

// ErrTooManyPending refuses a new request of an agent that already has the
// maximum of pending ones: an agent cannot flood the operator's queue.
var ErrTooManyPending = errors.New("too many pending approval requests for this agent")

// Store keeps approval requests where every toolgate process of a
// deployment sees them (package state: SQLite on one machine, PostgreSQL
// for several). Each method is atomic across processes: a transition
// (open, consume, decide, expire) is a conditional update that exactly one
// caller wins, which is what makes approvals single-use and the decision
// callback fire once per decision in the whole deployment.
type Store interface {
	// AcquireApproval is the call side, in one transaction: consume a ready
	// approval of a.Key (Granted), report once a denial or expiry not yet
	// reported (Refused), join the pending request (StillPending), or open
	// one (StillPending, Opened) — unless a.Key.Agent already has
	// a.MaxPending pending requests (ErrTooManyPending). Requests of the key
	// found past their expiry are expired on the way and returned in
	// Expired, for the caller to report.
	AcquireApproval(ctx context.Context, a Acquire) (Acquired, error)
	// DecideApproval moves a pending request to Approved (usable for ttl
	// from now) or Denied. A request no longer pending is ErrFinal; one past
	// its expiry is expired here (expired true: the caller reports it) and
	// also ErrFinal; an unknown id is ErrNotFound.
	DecideApproval(ctx context.Context, d Decide) (r Request, expired bool, err error)
	// MarkReported records that a caller was told of the denial or expiry
	// of id, so the next identical call opens a new request.
	MarkReported(ctx context.Context, id string) error
	// InsertApproval stores a request as given (Grant's already-used one).
	InsertApproval(ctx context.Context, r Request) error
	// GetApproval returns the request with id, or ErrNotFound.
	GetApproval(ctx context.Context, id string) (Request, error)
	// PendingApprovals lists pending, unexpired requests, oldest first.
	PendingApprovals(ctx context.Context, now time.Time) ([]Request, error)
	// ExpireApprovals expires every live request past its expiry and
	// returns those this call expired (no other caller gets them).
	ExpireApprovals(ctx context.Context, now time.Time) ([]Request, error)
	// MatchApprovalRule returns the live timed rule deciding a call (see
	// TimedRule.Covers; a denial before an approval).
	MatchApprovalRule(ctx context.Context, q RuleQuery) (TimedRule, bool, error)
	// ApprovalRules lists the live timed rules, oldest first.
	ApprovalRules(ctx context.Context, now time.Time) ([]TimedRule, error)
	// ExpireApprovalRules marks every live timed rule past its end as
	// expired and returns those this call marked (no other caller gets
	// them).
	ExpireApprovalRules(ctx context.Context, now time.Time) ([]TimedRule, error)
	// WatchApprovals returns a channel that receives (coalesced, never
	// blocking the store) after any change to any request by any process,
	// and a function that ends the subscription.
	WatchApprovals() (<-chan struct{}, func())
}

// Acquire is the argument of Store.AcquireApproval.
type Acquire struct {
	Key  Key
	Info Info
	Now  time.Time
	// TTL is how long a request opened now stays pending.
	TTL time.Duration
	// MaxPending caps the agent's pending requests (0: no cap).
	MaxPending int
	// NewID is the id to give a request opened by this call.
	NewID string
}

// Acquired is the result of Store.AcquireApproval.
type Acquired struct {
	// Outcome is Granted, Refused or StillPending.
	Outcome Outcome
	// Request is the request the outcome concerns.
	Request Request
	// Opened is true when this call opened Request.
	Opened bool
	// Expired are the requests this call expired on the way.
	Expired []Request
}

// Decide is the argument of Store.DecideApproval.
type Decide struct {
	ID     string
	To     State // Approved or Denied
	By     string
	Reason string
	Now    time.Time
	// TTL is how long an approval stays usable from now.
	TTL time.Duration
	// For, when set, also makes a timed rule (RuleFor) with id RuleID in
	// the same transaction; the answer carries it in Request.Rule. A rule
	// RuleFor refuses leaves the request pending and is the error.
	For    time.Duration
	RuleID string
}
