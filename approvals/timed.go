package approvals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A timed rule is an operator's decision that outlives one request:
// `approve ID --for D` lets the same agent call the same tool, under the
// same grant (so the same param_constraints), workspace revision and tool
// definition, for D
// without asking again; `deny ID --for D` refuses the identical call (same
// arguments) for D instead of opening a new request each time. Both are
// made in the decision's own transaction (Decide.For), so a rule exists
// exactly when its decision does, are audited when made and when they
// expire, and end with the revision: an edited workspace asks again.
//
// Trust boundary: a timed approval never covers a strict call (strict
// means a person sees each call), nor a call the grant checker did not
// send to approval; it only skips the wait of a call that would have been
// held.

// MaxFor bounds Decide.For: a standing approval longer than a working day
// belongs in the workspace (an approval rule), reviewed like the rest.
const MaxFor = 24 * time.Hour

// ErrStrictFor refuses `approve --for` on a strict call.
var ErrStrictFor = errors.New("a strict call is approved one call at a time")

// ErrBadFor refuses a --for duration out of bounds.
var ErrBadFor = errors.New("bad --for duration")

// TimedRule is one approve --for or deny --for rule.
type TimedRule struct {
	ID string `json:"id"`
	// Effect is Approved (calls run without asking) or Denied (refused).
	Effect   State  `json:"effect"`
	Agent    string `json:"agent"`
	Action   string `json:"action"`
	Revision string `json:"revision"`
	// Generation and Definition bind the rule like an approval (Key): the
	// revision's generation and the tool's definition digest.
	Generation int64  `json:"generation"`
	Definition string `json:"definition,omitempty"`
	// Grant is the grant the held call matched (approve: any call of the
	// tool admitted by that same grant is covered).
	Grant string `json:"grant,omitempty"`
	// ArgsSHA256 is the denied call's digest (deny: only that call).
	ArgsSHA256 string `json:"args_sha256,omitempty"`
	Tier       string `json:"tier"`
	// From is the request the operator decided when making the rule.
	From    string    `json:"from"`
	By      string    `json:"by"`
	Reason  string    `json:"reason,omitempty"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	// Expired is set once the rule's end was recorded.
	Expired bool `json:"expired,omitempty"`
}

// Record is the audit event's "approval" field of a call a timed rule
// decided: the rule, who made it and until when.
func (t TimedRule) Record() json.RawMessage {
	b, _ := json.Marshal(struct {
		Rule  string    `json:"rule"`
		From  string    `json:"from"`
		By    string    `json:"by"`
		At    time.Time `json:"at"`
		Until time.Time `json:"until"`
	}{t.ID, t.From, t.By, t.Created.UTC(), t.Expires.UTC()})
	return b
}

// RuleFor is the timed rule a decision on r for d makes, with id.
func RuleFor(r Request, to State, by, reason string, now time.Time, d time.Duration, id string) (TimedRule, error) {
	if d <= 0 || d > MaxFor {
		return TimedRule{}, fmt.Errorf("%w %s: give one between 1s and %s (a standing approval belongs in gateway.approvals.rules)", ErrBadFor, d, MaxFor)
	}
	t := TimedRule{
		ID: id, Effect: to, Agent: r.Agent, Action: r.Action, Revision: r.Revision, Generation: r.Generation, Definition: r.Definition, Tier: r.Tier,
		From: r.ID, By: by, Reason: reason, Created: now.UTC(), Expires: now.Add(d).UTC(),
	}
	switch to {
	case Approved:
		if r.Tier == "strict" {
			return TimedRule{}, fmt.Errorf("%w: %s is strict (every call is seen by a person); approve it without --for, or make the tool cautious and add an approval rule", ErrStrictFor, r.ID)
		}
		t.Grant = r.Grant
	case Denied:
		t.ArgsSHA256 = r.ArgsSHA256
	}
	return t, nil
}

// NewRuleID returns a short random timed-rule id.
func NewRuleID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "tr-" + hex.EncodeToString(b[:])
}

// Covers reports whether the live rule t decides a call of key under grant
// at now: a denial covers the identical call, an approval any call of the
// same agent, tool, grant and revision.
func (t TimedRule) Covers(key Key, grant string, now time.Time) bool {
	if t.Expired || !now.Before(t.Expires) || t.Agent != key.Agent || t.Action != key.Action || t.Revision != key.Revision ||
		t.Generation != key.Generation || t.Definition != key.Definition {
		return false
	}
	if t.Effect == Denied {
		return t.ArgsSHA256 == key.ArgsSHA256
	}
	return t.Effect == Approved && t.Grant == grant
}

// MatchRule returns the live timed rule deciding a call of key matched
// by grant, a denial before an approval; ok is false when none does.
func (b *Broker) MatchRule(ctx context.Context, key Key, grant string) (TimedRule, bool, error) {
	now := time.Now()
	if b.store != nil {
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		return b.store.MatchApprovalRule(ctx, RuleQuery{Key: key, Grant: grant, Now: now})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return matchRules(b.rules, key, grant, now)
}

// matchRules is MatchRule over a list: a denial wins.
func matchRules(rules []TimedRule, key Key, grant string, now time.Time) (TimedRule, bool, error) {
	var found TimedRule
	ok := false
	for _, t := range rules {
		if t.Covers(key, grant, now) && (!ok || t.Effect == Denied) {
			found, ok = t, true
		}
	}
	return found, ok, nil
}

// Rules lists the live timed rules, for the operator.
func (b *Broker) Rules(ctx context.Context) ([]TimedRule, error) {
	now := time.Now()
	if b.store != nil {
		ctx, cancel := context.WithTimeout(ctx, storeTimeout)
		defer cancel()
		return b.store.ApprovalRules(ctx, now)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []TimedRule
	for _, t := range b.rules {
		if !t.Expired && now.Before(t.Expires) {
			out = append(out, t)
		}
	}
	return out, nil
}

// RuleQuery is the argument of Store.MatchApprovalRule.
type RuleQuery struct {
	Key   Key
	Grant string
	Now   time.Time
}
