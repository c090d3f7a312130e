package state

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
)

// decisions counts OnDecision calls across every broker of a test, so a
// decision reported twice (or never) in the deployment is seen.
type decisions struct {
	mu  sync.Mutex
	got map[string][]approvals.State
}

func (d *decisions) record(r approvals.Request) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.got == nil {
		d.got = map[string][]approvals.State{}
	}
	d.got[r.ID] = append(d.got[r.ID], r.State)
}

func (d *decisions) of(id string) []approvals.State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]approvals.State(nil), d.got[id]...)
}

func newBroker(t testing.TB, s Store, d *decisions, ttl time.Duration) *approvals.Broker {
	b := approvals.New(approvals.Options{TTL: ttl, Store: s, OnDecision: d.record, Sweep: 20 * time.Millisecond, MaxPendingPerAgent: 4})
	t.Cleanup(b.Close)
	return b
}

var (
	testKey  = approvals.Key{Agent: "writer", Action: "command:call:git:push", ArgsSHA256: audit.ArgsDigest(map[string]any{"ref": "main"}), Revision: "r1"}
	testInfo = approvals.Info{Arguments: json.RawMessage(`{"ref":"main"}`), Argv: []string{"git", "push"}, Tier: "cautious", Reason: "write needs approval",
		Payload: audit.Payload{Provider: "command", Container: "git", Member: "push", Effects: "write"}}
)

// waitPending polls b until a pending request of key shows (from any
// process) and returns it.
func waitPending(t *testing.T, b *approvals.Broker, key approvals.Key) approvals.Request {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		list, err := b.PendingContext(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			if r.Key() == key {
				return r
			}
		}
		time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
	}
	t.Fatalf("no pending request of %+v", key)
	return approvals.Request{}
}

// TestApprovalAcrossReplicas: a call held through replica A is listed and
// approved through replica B; A's waiter wakes and runs once; the decision
// is reported once in the deployment; the identical call after it needs a
// new approval.
func TestApprovalAcrossReplicas(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		var d decisions
		a, b := newBroker(t, open(t), &d, time.Minute), newBroker(t, open(t), &d, time.Minute)
		got := make(chan approvals.Result, 1)
		go func() {
			got <- a.Wait(context.Background(), testKey, testInfo, approvals.WaitOptions{Wait: 30 * time.Second})
		}()
		req := waitPending(t, b, testKey)
		if string(req.Arguments) != `{"ref":"main"}` || req.Argv[1] != "push" || req.Payload.Member != "push" || req.Revision != "r1" {
			t.Errorf("B sees %+v", req)
		}
		approved, err := b.ApproveContext(context.Background(), req.ID, approvals.ByOperator)
		if err != nil || approved.State != approvals.Approved {
			t.Fatalf("approve through B: %+v %v", approved, err)
		}
		res := <-got
		if res.Outcome != approvals.Granted || res.Request.ID != req.ID || res.Request.DecidedBy != approvals.ByOperator {
			t.Fatalf("A's waiter: %+v", res)
		}
		if _, err := b.ApproveContext(context.Background(), req.ID, approvals.ByOperator); !errors.Is(err, approvals.ErrFinal) {
			t.Errorf("approving a used request: %v, want ErrFinal", err)
		}
		again := b.Wait(context.Background(), testKey, testInfo, approvals.WaitOptions{Wait: 10 * time.Millisecond})
		if again.Outcome != approvals.StillPending || again.Request.ID == req.ID {
			t.Errorf("the identical call after the approval was used: %+v, want a new pending request", again)
		}
		if got := d.of(req.ID); len(got) != 1 || got[0] != approvals.Approved {
			t.Errorf("decisions reported for %s: %v, want [approved] once", req.ID, got)
		}
	})
}

// TestConsumeRace: identical calls on two replicas race for one approval;
// exactly one runs.
func TestConsumeRace(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		var d decisions
		brokers := []*approvals.Broker{newBroker(t, open(t), &d, time.Minute), newBroker(t, open(t), &d, time.Minute)}
		first := brokers[0].Wait(context.Background(), testKey, testInfo, approvals.WaitOptions{Wait: time.Millisecond})
		if _, err := brokers[1].ApproveContext(context.Background(), first.Request.ID, approvals.ByOperator); err != nil {
			t.Fatal(err)
		}
		const racers = 16
		results := make(chan approvals.Result, racers)
		var start sync.WaitGroup
		start.Add(1)
		for i := range racers {
			go func() {
				start.Wait()
				results <- brokers[i%2].Wait(context.Background(), testKey, testInfo, approvals.WaitOptions{Wait: 50 * time.Millisecond})
			}()
		}
		start.Done()
		granted := 0
		for range racers {
			r := <-results
			switch r.Outcome {
			case approvals.Granted:
				granted++
			case approvals.StillPending:
			default:
				t.Errorf("racer: %+v", r)
			}
		}
		if granted != 1 {
			t.Errorf("%d racers ran under one approval, want exactly 1", granted)
		}
	})
}

// TestDenyAndExpiry: a denial wakes the waiter on the other replica with
// the reason; pending and approved-unused requests expire after the TTL;
// each decision is reported exactly once though both replicas sweep.
func TestDenyAndExpiry(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		var d decisions
		// Long enough for the other replica to list and decide a request
		// on a loaded machine before it expires; the expiries below wait it out.
		const ttl = 2 * time.Second
		a, b := newBroker(t, open(t), &d, ttl), newBroker(t, open(t), &d, ttl)
		ctx := context.Background()

		denyKey := testKey
		denyKey.ArgsSHA256 = "deny"
		got := make(chan approvals.Result, 1)
		go func() { got <- a.Wait(ctx, denyKey, testInfo, approvals.WaitOptions{Wait: 30 * time.Second}) }()
		req := waitPending(t, b, denyKey)
		if _, err := b.DenyContext(ctx, req.ID, approvals.ByOperator, "not on a Friday"); err != nil {
			t.Fatal(err)
		}
		if r := <-got; r.Outcome != approvals.Refused || r.Request.State != approvals.Denied || r.Request.DenyReason != "not on a Friday" {
			t.Errorf("waiter after deny: %+v", r)
		}

		// Pending, never decided: the waiter is told it expired.
		expKey := testKey
		expKey.ArgsSHA256 = "expire"
		r := a.Wait(ctx, expKey, testInfo, approvals.WaitOptions{Wait: 30 * time.Second})
		if r.Outcome != approvals.Refused || r.Request.State != approvals.Expired {
			t.Errorf("waiter past the TTL: %+v", r)
		}
		// Approved, never used.
		unusedKey := testKey
		unusedKey.ArgsSHA256 = "unused"
		open1 := a.Wait(ctx, unusedKey, testInfo, approvals.WaitOptions{Wait: time.Millisecond})
		if _, err := b.ApproveContext(ctx, open1.Request.ID, approvals.ByOperator); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for len(d.of(open1.Request.ID)) < 2 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling for the sweep, with a deadline
		}
		// Let both sweepers run a few more rounds: nothing may be reported again.
		time.Sleep(5 * 20 * time.Millisecond)
		for id, want := range map[string][]approvals.State{
			req.ID:           {approvals.Denied},
			r.Request.ID:     {approvals.Expired},
			open1.Request.ID: {approvals.Approved, approvals.Expired},
		} {
			if got := d.of(id); len(got) != len(want) || (len(got) > 0 && got[len(got)-1] != want[len(want)-1]) {
				t.Errorf("decisions of %s: %v, want %v (once each)", id, got, want)
			}
		}
		if again := a.Wait(ctx, unusedKey, testInfo, approvals.WaitOptions{Wait: time.Millisecond}); again.Outcome != approvals.Refused {
			t.Errorf("call after its approval expired: %+v, want told once it expired", again)
		}
	})
}

// TestMaxPendingAndErrors: an agent past its cap of pending requests is
// refused clearly; unknown ids and second decisions are errors.
func TestMaxPendingAndErrors(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		var d decisions
		b := newBroker(t, open(t), &d, time.Minute)
		ctx := context.Background()
		for i := range 4 {
			k := testKey
			k.ArgsSHA256 = string(rune('a' + i))
			if r := b.Wait(ctx, k, testInfo, approvals.WaitOptions{Wait: time.Millisecond}); r.Outcome != approvals.StillPending {
				t.Fatalf("request %d: %+v", i, r)
			}
		}
		k := testKey
		k.ArgsSHA256 = "over"
		r := b.Wait(ctx, k, testInfo, approvals.WaitOptions{Wait: time.Millisecond})
		if r.Outcome != approvals.Failed || !errors.Is(r.Err, approvals.ErrTooManyPending) {
			t.Errorf("fifth pending request: %+v, want Failed with ErrTooManyPending", r)
		}
		other := k
		other.Agent = "someone-else"
		if r := b.Wait(ctx, other, testInfo, approvals.WaitOptions{Wait: time.Millisecond}); r.Outcome != approvals.StillPending {
			t.Errorf("another agent is not held by the first one's cap: %+v", r)
		}
		if _, err := b.ApproveContext(ctx, "ap-nonexistent", approvals.ByOperator); !errors.Is(err, approvals.ErrNotFound) {
			t.Errorf("approve unknown: %v", err)
		}
		if g := b.Grant(testKey, testInfo, "rule:1"); g.State != approvals.Used {
			t.Errorf("grant: %+v", g)
		} else if got, ok := b.Get(g.ID); !ok || got.DecidedBy != "rule:1" {
			t.Errorf("granted request not in the store: %+v %v", got, ok)
		}
	})
}
