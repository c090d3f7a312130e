// Package approvals is the approval broker: a call that the
// tier says needs approval opens a request bound to {agent, action, SHA-256
// of the canonical arguments, workspace revision and its generation, digest
// of the tool's definition} (Key); an operator (console,
// CLI), a declarative rule or the harness's user (elicitation) approves or
// denies it; the identical call then runs once.
//
// Semantics, in one place:
//   - An approval is single-use: the call that runs under it consumes it.
//   - A pending request expires TTL after it was opened; an approved one TTL
//     after it was approved, if no identical call used it by then.
//   - A denial or an expiry is final for that request: it can never be
//     approved again. The next identical call is told once (DENIED: approval
//     <id> denied/expired); the call after that opens a new request.
//   - A changed argument is a different digest, so a different request.
//
// With Options.Store (package state) the requests live in the store that
// every toolgate process of a deployment shares: any process approves or
// denies any request, a waiting call wakes when its request is decided
// elsewhere, and every transition is a conditional update that exactly one
// process wins — so an approval runs once across replicas, and OnDecision
// fires once per decision in the whole deployment (in the process whose
// update made the transition). Without a Store the broker keeps its
// requests in this process's memory, as unit tests and single-process
// tools want.
package approvals

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// DefaultTTL and DefaultWait apply when the workspace leaves approvals.ttl
// and approvals.wait unset.
const (
	DefaultTTL  = 10 * time.Minute
	DefaultWait = 30 * time.Second
)

// State is where a request is in its life.
type State string

// The states. Pending and Approved are live; the others are final.
const (
	Pending  State = "pending"
	Approved State = "approved"
	Denied   State = "denied"
	Expired  State = "expired"
	Used     State = "used"
)

// Approver names who decided, as recorded in the audit ("by").
const (
	ByOperator    = "operator"
	ByElicitation = "elicitation"
)

// ErrNotFound is returned for an id the broker does not know (never issued,
// issued by another process, or forgotten after it ended long ago).
var ErrNotFound = errors.New("no such approval request")

// ErrFinal is returned when approving or denying a request that is no
// longer pending.
var ErrFinal = errors.New("approval request is no longer pending")

// Key is what an approval is bound to: one agent, one action, one exact set
// of arguments, one revision of the workspace — by its content hash and by
// its generation, which only grows, so a file reverted to older content
// revives nothing — and one definition of the tool (its digest), so a tool
// redefined while the call waits is not run under the old approval.
type Key struct {
	Agent      string
	Action     string
	ArgsSHA256 string
	Revision   string
	Generation int64
	Definition string
}

// Info is what an operator is shown about a call, fixed when the request is
// opened. Arguments and Argv must already be redacted.
type Info struct {
	Arguments json.RawMessage
	Argv      []string
	Tier      string
	Reason    string
	Payload   audit.Payload
}

// Request is a snapshot of one approval request.
type Request struct {
	ID         string `json:"id"`
	Agent      string `json:"agent"`
	Action     string `json:"action"`
	ArgsSHA256 string `json:"args_sha256"`
	Revision   string `json:"revision"`
	// Generation and Definition complete the binding (Key).
	Generation int64           `json:"generation"`
	Definition string          `json:"definition,omitempty"`
	Arguments  json.RawMessage `json:"arguments"`
	Argv       []string        `json:"argv,omitempty"`
	Tier       string          `json:"tier"`
	Reason     string          `json:"reason"`
	Payload    audit.Payload   `json:"payload"`
	State      State           `json:"state"`
	Created    time.Time       `json:"created"`
	Expires    time.Time       `json:"expires"`
	// DecidedBy is operator, elicitation or rule:<n> once decided.
	DecidedBy  string    `json:"decided_by,omitempty"`
	DecidedAt  time.Time `json:"decided_at,omitzero"`
	DenyReason string    `json:"deny_reason,omitempty"`
}

// Key returns the binding of the request.
func (r Request) Key() Key {
	return Key{Agent: r.Agent, Action: r.Action, ArgsSHA256: r.ArgsSHA256, Revision: r.Revision, Generation: r.Generation, Definition: r.Definition}
}

// Record is the audit event's "approval" field for a call that ran under
// this request: which request, who approved it and when.
func (r Request) Record() json.RawMessage {
	b, _ := json.Marshal(struct {
		ID string    `json:"id"`
		By string    `json:"by"`
		At time.Time `json:"at"`
	}{r.ID, r.DecidedBy, r.DecidedAt.UTC()})
	return b
}

// Options configure a Broker.
type Options struct {
	// TTL bounds how long a request stays pending and an approval stays
	// usable (default DefaultTTL).
	TTL time.Duration
	// OnDecision is called, outside the broker's lock, whenever a request
	// is approved, denied or expires, so the gateway can audit it and push
	// it to the console. It must not block for long.
	OnDecision func(Request)
	// Store, when set, holds the requests where every process of the
	// deployment sees them; nil keeps them in this process's memory.
	Store Store
	// MaxPendingPerAgent caps one agent's pending requests
	// (gateway.approvals.max_pending; default DefaultMaxPending); a call
	// beyond it is refused with ErrTooManyPending.
	MaxPendingPerAgent int
	// Recheck is how often a waiting call looks at the store even without
	// a notification, a safety net for one lost with a connection
	// (default 1s). Sweep is how often expired requests are expired
	// (default 1s).
	Recheck, Sweep time.Duration
}

// Broker holds the approval requests of one process. It is safe for
// concurrent use.
type Broker struct {
	ttl        time.Duration
	onDecision func(Request)
	maxPending int

	store          Store
	recheck, sweep time.Duration
	stopSweep      chan struct{}
	sweepDone      chan struct{}

	mu     sync.Mutex
	byID   map[string]*entry
	latest map[Key]*entry
	subs   map[chan struct{}]struct{}
	closed bool
}

type entry struct {
	req Request
	// done is closed when the request leaves Pending.
	done chan struct{}
	// reported is set once a caller was told of a denial or expiry.
	reported bool
	timer    *time.Timer
}

// New returns an empty broker.
func New(opts Options) *Broker {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.MaxPendingPerAgent <= 0 {
		opts.MaxPendingPerAgent = DefaultMaxPending
	}
	b := &Broker{
		ttl:        opts.TTL,
		onDecision: opts.OnDecision,
		maxPending: opts.MaxPendingPerAgent,
		store:      opts.Store,
		recheck:    cmp.Or(opts.Recheck, time.Second),
		sweep:      cmp.Or(opts.Sweep, time.Second),
		byID:       map[string]*entry{},
		latest:     map[Key]*entry{},
		subs:       map[chan struct{}]struct{}{},
	}
	if b.store != nil {
		b.stopSweep, b.sweepDone = make(chan struct{}), make(chan struct{})
		go b.sweeper()
	}
	return b
}

// TTL is how long requests and approvals stay valid.
func (b *Broker) TTL() time.Duration { return b.ttl }

// Close stops the expiry timers. Requests are kept but never expire again.
func (b *Broker) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.store != nil && !b.closed {
		close(b.stopSweep)
		<-b.sweepDone
	}
	b.closed = true
	for _, e := range b.byID {
		if e.timer != nil {
			e.timer.Stop()
		}
	}
}

// Get returns the request with id, in whatever state it is.
func (b *Broker) Get(id string) (Request, bool) {
	if b.store != nil {
		r, err := b.GetContext(context.Background(), id)
		return r, err == nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byID[id]
	if !ok {
		return Request{}, false
	}
	return e.req, true
}

// Pending lists the requests waiting for a decision, oldest first.
func (b *Broker) Pending() []Request {
	if b.store != nil {
		out, _ := b.PendingContext(context.Background())
		return out
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Request
	for _, e := range b.byID {
		if e.req.State == Pending {
			out = append(out, e.req)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Created.Equal(out[j].Created) {
			return out[i].Created.Before(out[j].Created)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Approve approves a pending request on behalf of by (ByOperator,
// ByElicitation). The approval is usable once, for TTL from now.
func (b *Broker) Approve(id, by string) (Request, error) {
	return b.ApproveContext(context.Background(), id, by)
}

// Deny refuses a pending request for good; reason is shown to the agent.
func (b *Broker) Deny(id, by, reason string) (Request, error) {
	return b.DenyContext(context.Background(), id, by, reason)
}

func (b *Broker) decide(id string, to State, by, reason string) (Request, error) {
	b.mu.Lock()
	e, ok := b.byID[id]
	if !ok {
		b.mu.Unlock()
		return Request{}, fmt.Errorf("%w %q (it was never issued by this gateway process, or ended long ago)", ErrNotFound, id)
	}
	if e.req.State != Pending {
		st := e.req.State
		b.mu.Unlock()
		return Request{}, fmt.Errorf("%w: %s is %s", ErrFinal, id, st)
	}
	now := time.Now()
	if !now.Before(e.req.Expires) {
		b.expireLocked(e, now)
		req := e.req
		b.mu.Unlock()
		b.notify(req)
		return Request{}, fmt.Errorf("%w: %s is %s", ErrFinal, id, Expired)
	}
	e.req.State, e.req.DecidedBy, e.req.DecidedAt, e.req.DenyReason = to, by, now, reason
	if to == Approved {
		e.req.Expires = now.Add(b.ttl)
		b.armLocked(e)
	} else if e.timer != nil {
		e.timer.Stop()
	}
	close(e.done)
	req := e.req
	b.mu.Unlock()
	b.notify(req)
	return req, nil
}

// Grant records a call approved on the spot (by an approval rule): the
// request is created already used, so it shows in history and its id goes
// into the audit event.
func (b *Broker) Grant(key Key, info Info, by string) Request {
	r, _ := b.GrantContext(context.Background(), key, info, by)
	return r
}

func (b *Broker) grantMem(key Key, info Info, by string) Request {
	now := time.Now()
	e := b.newEntry(key, info, now)
	e.req.State, e.req.DecidedBy, e.req.DecidedAt = Used, by, now
	close(e.done)
	b.mu.Lock()
	b.pruneLocked(now)
	b.byID[e.req.ID] = e
	b.mu.Unlock()
	return e.req
}

// Subscribe returns a channel that receives (without blocking the broker;
// bursts coalesce) whenever the set of requests changes, and a function
// that ends the subscription.
func (b *Broker) Subscribe() (<-chan struct{}, func()) {
	if b.store != nil {
		return b.store.WatchApprovals()
	}
	ch := make(chan struct{}, 1)
	b.mu.Lock()
	b.subs[ch] = struct{}{}
	b.mu.Unlock()
	return ch, func() {
		b.mu.Lock()
		delete(b.subs, ch)
		b.mu.Unlock()
	}
}

// notify wakes subscribers and reports a decision; called without the lock.
func (b *Broker) notify(decided Request) {
	b.mu.Lock()
	for ch := range b.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
	if b.onDecision != nil && decided.ID != "" && decided.State != Pending {
		b.onDecision(decided)
	}
}

func (b *Broker) newEntry(key Key, info Info, now time.Time) *entry {
	return &entry{
		req: Request{
			ID: newID(), Agent: key.Agent, Action: key.Action, ArgsSHA256: key.ArgsSHA256, Revision: key.Revision,
			Generation: key.Generation, Definition: key.Definition,
			Arguments: info.Arguments, Argv: info.Argv, Tier: info.Tier, Reason: info.Reason, Payload: info.Payload,
			State: Pending, Created: now, Expires: now.Add(b.ttl),
		},
		done: make(chan struct{}),
	}
}

// armLocked (re)starts the expiry timer of a live request.
func (b *Broker) armLocked(e *entry) {
	if b.closed {
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	id := e.req.ID
	e.timer = time.AfterFunc(time.Until(e.req.Expires), func() { b.expireIfDue(id) })
}

func (b *Broker) expireIfDue(id string) {
	b.mu.Lock()
	e, ok := b.byID[id]
	now := time.Now()
	if !ok || (e.req.State != Pending && e.req.State != Approved) || now.Before(e.req.Expires) {
		b.mu.Unlock()
		return
	}
	b.expireLocked(e, now)
	req := e.req
	b.mu.Unlock()
	b.notify(req)
}

// expireLocked ends a live request whose time is up.
func (b *Broker) expireLocked(e *entry, now time.Time) {
	wasPending := e.req.State == Pending
	e.req.State = Expired
	if wasPending {
		e.req.DecidedAt = now
		close(e.done)
	}
	if e.timer != nil {
		e.timer.Stop()
	}
}

// keepFinished is how long ended requests stay queryable by id.
const keepFinished = time.Hour

// pruneLocked forgets requests that ended long ago and are no longer the
// latest of their key, so memory stays bounded in a long-running daemon.
func (b *Broker) pruneLocked(now time.Time) {
	for id, e := range b.byID {
		live := e.req.State == Pending || e.req.State == Approved
		if live || now.Sub(e.req.DecidedAt) < keepFinished || now.Sub(e.req.Created) < keepFinished {
			continue
		}
		delete(b.byID, id)
		if b.latest[e.req.Key()] == e {
			delete(b.latest, e.req.Key())
		}
	}
}

// newID returns a short random request id, easy to type on a command line.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "ap-" + hex.EncodeToString(b[:])
}
