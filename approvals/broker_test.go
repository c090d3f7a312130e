package approvals

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

func key(args string) Key {
	return Key{Agent: "a", Action: "command:call:p:write", ArgsSHA256: args, Revision: "rev1"}
}

// pendingID waits (polling, with a deadline) until key has a pending
// request and returns its id.
func pendingID(t *testing.T, b *Broker, k Key) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, r := range b.Pending() {
			if r.Key() == k {
				return r.ID
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no pending request for %+v", k)
	return ""
}

// waitAsync runs Wait in the background and returns its result channel.
func waitAsync(b *Broker, k Key, wait time.Duration) <-chan Result {
	ch := make(chan Result, 1)
	go func() { ch <- b.Wait(context.Background(), k, Info{Tier: "strict"}, WaitOptions{Wait: wait}) }()
	return ch
}

func TestApproveDuringWaitIsSingleUse(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var decided []Request
	b := New(Options{TTL: time.Minute, OnDecision: func(r Request) { mu.Lock(); decided = append(decided, r); mu.Unlock() }})
	defer b.Close()
	k := key("d1")
	res := waitAsync(b, k, time.Minute)
	id := pendingID(t, b, k)
	if _, err := b.Approve(id, ByOperator); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.Outcome != Granted || r.Request.ID != id || r.Request.State != Used || r.Request.DecidedBy != ByOperator {
		t.Fatalf("result = %+v, want granted by operator, used", r)
	}
	if got, _ := b.Get(id); got.State != Used {
		t.Errorf("after use state = %s, want used", got.State)
	}
	// The identical call again: a new request, not the used approval.
	again := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: 20 * time.Millisecond})
	if again.Outcome != StillPending || again.Request.ID == id {
		t.Errorf("replay = %+v, want a new pending request", again)
	}
	if _, err := b.Approve(id, ByOperator); !errors.Is(err, ErrFinal) {
		t.Errorf("approving a used request: err = %v, want ErrFinal", err)
	}
	if _, err := b.Deny("ap-nope", ByOperator, "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("denying an unknown id: err = %v, want ErrNotFound", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(decided) != 1 || decided[0].ID != id || decided[0].State != Approved {
		t.Errorf("OnDecision saw %+v, want the one approval", decided)
	}
}

func TestApprovalIsBoundToArguments(t *testing.T) {
	t.Parallel()
	b := New(Options{TTL: time.Minute})
	defer b.Close()
	first := b.Wait(context.Background(), key("args-A"), Info{}, WaitOptions{Wait: time.Millisecond})
	if first.Outcome != StillPending {
		t.Fatalf("first = %+v", first)
	}
	if _, err := b.Approve(first.Request.ID, ByOperator); err != nil {
		t.Fatal(err)
	}
	changed := b.Wait(context.Background(), key("args-B"), Info{}, WaitOptions{Wait: time.Millisecond})
	if changed.Outcome != StillPending || changed.Request.ID == first.Request.ID {
		t.Errorf("changed args = %+v, want their own pending request", changed)
	}
	other := key("args-A")
	other.Revision = "rev2"
	if r := b.Wait(context.Background(), other, Info{}, WaitOptions{Wait: time.Millisecond}); r.Outcome != StillPending {
		t.Errorf("another workspace revision = %+v, want pending", r)
	}
	if r := b.Wait(context.Background(), key("args-A"), Info{}, WaitOptions{Wait: time.Minute}); r.Outcome != Granted || r.Request.ID != first.Request.ID {
		t.Errorf("identical call = %+v, want granted by the first approval", r)
	}
}

func TestDenialIsFinalForThatRequest(t *testing.T) {
	t.Parallel()
	b := New(Options{TTL: time.Minute})
	defer b.Close()
	k := key("d")
	res := waitAsync(b, k, time.Minute)
	id := pendingID(t, b, k)
	if _, err := b.Deny(id, ByOperator, "not today"); err != nil {
		t.Fatal(err)
	}
	r := <-res
	if r.Outcome != Refused || r.Request.State != Denied || r.Request.DenyReason != "not today" {
		t.Fatalf("waiting call = %+v, want refused with the reason", r)
	}
	if _, err := b.Approve(id, ByOperator); !errors.Is(err, ErrFinal) {
		t.Errorf("approve after deny: err = %v, want ErrFinal", err)
	}
	next := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Millisecond})
	if next.Outcome != StillPending || next.Request.ID == id {
		t.Errorf("next identical call = %+v, want a new pending request", next)
	}
}

func TestUnreportedDenialIsToldOnce(t *testing.T) {
	t.Parallel()
	b := New(Options{TTL: time.Minute})
	defer b.Close()
	k := key("later")
	first := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Millisecond})
	if _, err := b.Deny(first.Request.ID, ByOperator, "no"); err != nil {
		t.Fatal(err)
	}
	told := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Minute})
	if told.Outcome != Refused || told.Request.ID != first.Request.ID {
		t.Fatalf("retry after denial = %+v, want the denial of %s", told, first.Request.ID)
	}
	if again := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Millisecond}); again.Outcome != StillPending || again.Request.ID == first.Request.ID {
		t.Errorf("the call after = %+v, want a new pending request", again)
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	const ttl = 60 * time.Millisecond
	cases := []struct {
		name    string
		approve bool
	}{
		{"pending request expires while waited on", false},
		{"unused approval expires", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			expired := make(chan Request, 1)
			b := New(Options{TTL: ttl, OnDecision: func(r Request) {
				if r.State == Expired {
					expired <- r
				}
			}})
			defer b.Close()
			k := key(c.name)
			if !c.approve {
				r := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Minute})
				if r.Outcome != Refused || r.Request.State != Expired {
					t.Fatalf("result = %+v, want refused: expired", r)
				}
				return
			}
			first := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Millisecond})
			if _, err := b.Approve(first.Request.ID, ByOperator); err != nil {
				t.Fatal(err)
			}
			select {
			case r := <-expired:
				if r.ID != first.Request.ID {
					t.Fatalf("expired %s, want %s", r.ID, first.Request.ID)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the approval never expired")
			}
			r := b.Wait(context.Background(), k, Info{}, WaitOptions{Wait: time.Minute})
			if r.Outcome != Refused || r.Request.ID != first.Request.ID || r.Request.State != Expired {
				t.Fatalf("call after expiry = %+v, want refused: expired", r)
			}
		})
	}
}

func TestConcurrentWaitersShareOneSingleUseApproval(t *testing.T) {
	t.Parallel()
	b := New(Options{TTL: time.Minute})
	defer b.Close()
	k := key("race")
	a, c := waitAsync(b, k, time.Second), waitAsync(b, k, time.Second)
	id := pendingID(t, b, k)
	// Both joined the one request before it is approved.
	deadline := time.Now().Add(5 * time.Second)
	for len(b.Pending()) != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if _, err := b.Approve(id, ByOperator); err != nil {
		t.Fatal(err)
	}
	r1, r2 := <-a, <-c
	granted := 0
	for _, r := range []Result{r1, r2} {
		if r.Outcome == Granted {
			granted++
		} else if r.Outcome != StillPending || r.Request.ID == id {
			t.Errorf("loser = %+v, want a new pending request", r)
		}
	}
	if granted != 1 {
		t.Errorf("%d calls ran under one approval, want exactly 1 (%+v, %+v)", granted, r1, r2)
	}
}

func TestProgressAndCancel(t *testing.T) {
	t.Parallel()
	b := New(Options{TTL: time.Minute})
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var seen []string
	r := b.Wait(ctx, key("p"), Info{}, WaitOptions{Wait: time.Minute, ProgressEvery: time.Millisecond, Progress: func(r Request, _ time.Duration) {
		seen = append(seen, r.ID)
		if len(seen) == 3 {
			cancel()
		}
	}})
	if r.Outcome != Canceled || len(seen) < 3 || seen[0] != r.Request.ID {
		t.Errorf("result %+v after progress %v, want canceled after 3 reports of its id", r, seen)
	}
	if got, _ := b.Get(r.Request.ID); got.State != Pending {
		t.Errorf("a canceled wait leaves the request %s, want pending", got.State)
	}
}

func TestGrantRecordsRuleApproval(t *testing.T) {
	t.Parallel()
	b := New(Options{})
	defer b.Close()
	r := b.Grant(key("g"), Info{}, "rule:2")
	got, ok := b.Get(r.ID)
	if !ok || got.State != Used || got.DecidedBy != "rule:2" {
		t.Fatalf("granted request = %+v", got)
	}
	if rec := string(r.Record()); rec == "" || rec[0] != '{' {
		t.Errorf("record = %s", rec)
	}
	if len(b.Pending()) != 0 {
		t.Errorf("a rule approval left a pending request")
	}
}

// TestMaxPendingPerAgentInMemory: an agent flooding the queue with
// distinct calls is refused past its cap, with ErrTooManyPending; joining
// an existing request and other agents are not affected.
func TestMaxPendingPerAgentInMemory(t *testing.T) {
	t.Parallel()
	b := New(Options{MaxPendingPerAgent: 3})
	defer b.Close()
	ctx := context.Background()
	for i := range 3 {
		if r := b.Wait(ctx, key(string(rune('a'+i))), Info{}, WaitOptions{Wait: time.Millisecond}); r.Outcome != StillPending {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	over := b.Wait(ctx, key("flood"), Info{}, WaitOptions{Wait: time.Millisecond})
	if over.Outcome != Failed || !errors.Is(over.Err, ErrTooManyPending) {
		t.Errorf("past the cap: %+v, want Failed with ErrTooManyPending", over)
	}
	if r := b.Wait(ctx, key("a"), Info{}, WaitOptions{Wait: time.Millisecond}); r.Outcome != StillPending {
		t.Errorf("joining an existing request past the cap: %+v", r)
	}
	other := key("flood")
	other.Agent = "b"
	if r := b.Wait(ctx, other, Info{}, WaitOptions{Wait: time.Millisecond}); r.Outcome != StillPending {
		t.Errorf("another agent: %+v", r)
	}
	if got := len(b.Pending()); got != 4 {
		t.Errorf("%d pending, want 4", got)
	}
}
