package state

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
)

// TestTimedRulesAcrossReplicas: approve --for made through replica B lets
// the same agent's call of the same tool under the same grant skip the
// wait on replica A (other arguments too), not another grant nor another
// revision; deny --for refuses only the identical call; a strict request
// cannot be approved --for and stays pending; each rule's end is reported
// once in the deployment.
func TestTimedRulesAcrossReplicas(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		var mu sync.Mutex
		ended := map[string]int{}
		newB := func() *approvals.Broker {
			b := approvals.New(approvals.Options{TTL: time.Minute, Store: open(t), Sweep: 20 * time.Millisecond,
				OnRuleExpired: func(r approvals.TimedRule) { mu.Lock(); ended[r.ID]++; mu.Unlock() }})
			t.Cleanup(b.Close)
			return b
		}
		a, b := newB(), newB()
		ctx := context.Background()
		info := testInfo
		info.Grant = "tool:git:push"
		hold := func(key approvals.Key, info approvals.Info) approvals.Request {
			t.Helper()
			res := a.Wait(ctx, key, info, approvals.WaitOptions{Wait: time.Nanosecond})
			if res.Outcome != approvals.StillPending {
				t.Fatalf("held call: %s", res.Outcome)
			}
			return res.Request
		}
		req := hold(testKey, info)
		if req.Grant != "tool:git:push" {
			t.Fatalf("the request does not record its grant: %+v", req)
		}
		got, err := b.ApproveFor(ctx, req.ID, "operator:alice", 2*time.Second) // long enough to outlast the checks below on a loaded machine
		if err != nil || got.Rule == nil || got.Rule.Effect != approvals.Approved || got.Rule.By != "operator:alice" || got.Rule.From != req.ID {
			t.Fatalf("approve --for: %+v %v", got.Rule, err)
		}
		other := testKey
		other.ArgsSHA256 = "other-arguments"
		if r, ok, err := a.MatchRule(ctx, other, "tool:git:push"); err != nil || !ok || r.ID != got.Rule.ID {
			t.Errorf("the same tool under the same grant with other arguments: %+v %v %v, want the rule", r, ok, err)
		}
		if _, ok, _ := a.MatchRule(ctx, other, "tool:git:*"); ok {
			t.Error("a call matched by another grant is covered")
		}
		rev := other
		rev.Revision = "r2"
		if _, ok, _ := a.MatchRule(ctx, rev, "tool:git:push"); ok {
			t.Error("a call under another revision is covered")
		}

		// deny --for: the identical call only; it wins over the approval.
		denyKey := other
		d := hold(denyKey, info)
		dr, err := b.DenyFor(ctx, d.ID, "operator:bob", "not that branch", 2*time.Second) // long enough to outlast the checks below on a loaded machine
		if err != nil || dr.Rule == nil || dr.Rule.Effect != approvals.Denied || dr.Rule.ArgsSHA256 != denyKey.ArgsSHA256 {
			t.Fatalf("deny --for: %+v %v", dr.Rule, err)
		}
		if r, ok, _ := a.MatchRule(ctx, denyKey, "tool:git:push"); !ok || r.Effect != approvals.Denied {
			t.Errorf("the denied call: %+v %v, want the denial", r, ok)
		}

		// strict: no --for.
		strictInfo := info
		strictInfo.Tier = "strict"
		sk := testKey
		sk.Action = "command:call:vault:stash"
		s := hold(sk, strictInfo)
		if _, err := b.ApproveFor(ctx, s.ID, "operator:alice", time.Minute); !errors.Is(err, approvals.ErrStrictFor) {
			t.Errorf("approve --for on a strict call: %v, want ErrStrictFor", err)
		}
		if cur, _ := b.GetContext(ctx, s.ID); cur.State != approvals.Pending {
			t.Errorf("a refused --for decided the request anyway: %s", cur.State)
		}
		if _, err := b.ApproveFor(ctx, s.ID, "operator:alice", 48*time.Hour); err == nil {
			t.Error("--for beyond the maximum accepted")
		}

		live, err := a.Rules(ctx)
		if err != nil || len(live) != 2 {
			t.Fatalf("live rules: %d %v, want 2", len(live), err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := len(ended)
			mu.Unlock()
			if n == 2 || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond) // polling a condition with a deadline
		}
		mu.Lock()
		defer mu.Unlock()
		if ended[got.Rule.ID] != 1 || ended[dr.Rule.ID] != 1 {
			t.Errorf("rule ends reported %v, want each once", ended)
		}
		if _, ok, _ := a.MatchRule(ctx, other, "tool:git:push"); ok {
			t.Error("an expired rule still covers")
		}
	})
}
