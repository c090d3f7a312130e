package state

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
)

// TestRecordRevision: every replica that loads the same file agrees on its
// generation; an edit gets the next one, and reverting the edit gets a new
// one again (never the old number back); replicas racing on the same
// revision record it once.
func TestRecordRevision(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		a, b := open(t), open(t)
		ctx := context.Background()
		steps := []struct {
			s    Store
			rev  string
			want int64
		}{
			{a, "A", 1}, {b, "A", 1}, {a, "A", 1},
			{a, "B", 2}, {b, "B", 2},
			{b, "A", 3}, {a, "A", 3},
		}
		for i, st := range steps {
			if got, err := st.s.RecordRevision(ctx, st.rev); err != nil || got != st.want {
				t.Fatalf("step %d: RecordRevision(%s) = %d %v, want %d", i, st.rev, got, err, st.want)
			}
		}
		if _, err := a.RecordRevision(ctx, ""); err == nil {
			t.Error("an empty revision was recorded")
		}
		var wg sync.WaitGroup
		gens := make([]int64, 8)
		for i := range gens {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := a
				if i%2 == 1 {
					s = b
				}
				g, err := s.RecordRevision(ctx, "C")
				if err != nil {
					t.Error(err)
				}
				gens[i] = g
			}()
		}
		wg.Wait()
		for _, g := range gens {
			if g != 4 {
				t.Fatalf("racing replicas recorded C as %v, want 4 for all", gens)
			}
		}
	})
}

// TestApprovalBindsGenerationAndDefinition: an approval given under one
// generation (or one tool definition) is not found by the identical call
// under another: a new request opens, and the approved one stays unused.
func TestApprovalBindsGenerationAndDefinition(t *testing.T) {
	t.Parallel()
	forBackends(t, func(t *testing.T, open func(testing.TB) Store) {
		s := open(t)
		ctx := context.Background()
		now := time.Now()
		key := approvals.Key{Agent: "w", Action: "command:call:vault:stash", ArgsSHA256: "d", Revision: "A", Generation: 1, Definition: "sha256:one"}
		acq := func(k approvals.Key, id string) approvals.Acquired {
			t.Helper()
			r, err := s.AcquireApproval(ctx, approvals.Acquire{Key: k, Now: now, TTL: time.Minute, NewID: id})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		first := acq(key, "ap-1")
		if !first.Opened || first.Request.Generation != 1 || first.Request.Definition != "sha256:one" {
			t.Fatalf("opened %+v", first)
		}
		if _, _, err := s.DecideApproval(ctx, approvals.Decide{ID: "ap-1", To: approvals.Approved, By: "operator", Now: now, TTL: time.Minute}); err != nil {
			t.Fatal(err)
		}
		reverted := key
		reverted.Generation = 3 // the same content hash, a later generation
		redefined := key
		redefined.Definition = "sha256:two"
		for i, k := range []approvals.Key{reverted, redefined} {
			got := acq(k, "ap-new-"+string(rune('a'+i)))
			if got.Outcome != approvals.StillPending || !got.Opened {
				t.Errorf("key %+v found %+v, want a new pending request", k, got)
			}
		}
		if got := acq(key, "ap-x"); got.Outcome != approvals.Granted || got.Request.ID != "ap-1" {
			t.Errorf("the approved key itself: %+v", got)
		}
		r, err := s.GetApproval(ctx, "ap-1")
		if err != nil || r.Key() != key {
			t.Errorf("stored %+v %v, want key %+v", r.Key(), err, key)
		}
	})
}
