package approvals

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// TestTimedRulesInMemory: the broker without a store keeps approve/deny
// --for rules too, matches them like the store (TimedRule.Covers) and
// reports each end once.
func TestTimedRulesInMemory(t *testing.T) {
	t.Parallel()
	ended := make(chan TimedRule, 4)
	b := New(Options{TTL: time.Minute, OnRuleExpired: func(r TimedRule) { ended <- r }})
	t.Cleanup(b.Close)
	ctx := context.Background()
	key := Key{Agent: "w", Action: "command:call:notes:append", ArgsSHA256: "d1", Revision: "r1"}
	info := Info{Grant: "tool:notes:append", Tier: "cautious", Arguments: json.RawMessage(`{}`)}
	res := b.Wait(ctx, key, info, WaitOptions{Wait: time.Nanosecond})
	r, err := b.ApproveFor(ctx, res.Request.ID, "operator:alice", 100*time.Millisecond)
	if err != nil || r.Rule == nil || r.State != Approved {
		t.Fatalf("approve --for: %+v %v", r, err)
	}
	next := key
	next.ArgsSHA256 = "d2"
	if got, ok, _ := b.MatchRule(ctx, next, "tool:notes:append"); !ok || got.ID != r.Rule.ID {
		t.Fatalf("next call of the tool not covered: %+v %v", got, ok)
	}
	if _, ok, _ := b.MatchRule(ctx, next, "tool:notes:*"); ok {
		t.Fatal("another grant covered")
	}
	select {
	case e := <-ended:
		if e.ID != r.Rule.ID || !e.Expired {
			t.Errorf("ended %+v", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the rule's end was never reported")
	}
	if _, ok, _ := b.MatchRule(ctx, next, "tool:notes:append"); ok {
		t.Error("an ended rule still covers")
	}
}
