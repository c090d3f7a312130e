package state

import (
	"context"
	"sync"
	"testing"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state/pgtest"
)

// TestChainAnchoredHead: without a signing key, rows deleted from the end
// of the PostgreSQL chain, or the chain rewritten from scratch, verify as
// a chain, and are refused against a head anchored before: the head the
// chain announces (OnHead, at open and at each commit).
func TestChainAnchoredHead(t *testing.T) {
	t.Parallel()
	cl := pgtest.Need(t)
	ctx := context.Background()
	p, err := OpenPostgres(ctx, cl.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var mu sync.Mutex
	var heads []audit.Anchor
	onHead := func(a audit.Anchor, _ bool) {
		mu.Lock()
		defer mu.Unlock()
		heads = append(heads, a)
	}
	sink, err := p.OpenAudit("", audit.Options{OnHead: onHead})
	if err != nil {
		t.Fatal(err)
	}
	var last audit.Event
	for range 20 {
		last = audit.Event{Agent: "a", Decision: "deny"}
		if err := sink.Append(&last); err != nil {
			t.Fatal(err)
		}
	}
	sink.Close()
	mu.Lock()
	anchor := heads[len(heads)-1]
	mu.Unlock()
	if anchor != (audit.Anchor{Seq: 20, Hash: last.Hash}) {
		t.Fatalf("announced head %v, want 20:%s", anchor, last.Hash)
	}
	// A second process opening the chain announces the head it finds.
	heads = nil
	again, err := p.OpenAudit("", audit.Options{OnHead: onHead})
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if len(heads) != 1 || heads[0] != anchor {
		t.Fatalf("at open: announced %v, want %v", heads, anchor)
	}
	if rep, err := p.VerifyChain(ctx, audit.VerifyOptions{Head: &anchor}); err != nil || !rep.Anchored {
		t.Fatalf("the intact chain against its head: %+v %v", rep, err)
	}
	if _, err := p.db.Exec(`DELETE FROM audit_events WHERE seq > 17`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.db.Exec(`UPDATE audit_head SET seq = 17, hash = (SELECT hash FROM audit_events WHERE seq = 17)`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.VerifyChain(ctx, audit.VerifyOptions{}); err != nil {
		t.Fatalf("the cut chain should verify as a chain (that is the attack): %v", err)
	}
	_, err = p.VerifyChain(ctx, audit.VerifyOptions{Head: &anchor})
	if ve, ok := audit.AsVerifyError(err); !ok || ve.Problem != audit.ProblemAnchor {
		t.Errorf("rows cut from the end against the anchored head: %v", err)
	}
	// Rewritten from scratch: every row gone, 25 new ones chained anew.
	if _, err := p.db.Exec(`DELETE FROM audit_events`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.db.Exec(`UPDATE audit_head SET seq = 0, hash = $1, sealed = false`, audit.GenesisPrev); err != nil {
		t.Fatal(err)
	}
	forged := p.AuditChain(audit.Options{})
	for range 25 {
		if err := forged.Append(&audit.Event{Agent: "a", Decision: "allow", Reason: "forged"}); err != nil {
			t.Fatal(err)
		}
	}
	forged.Close()
	if _, err := p.VerifyChain(ctx, audit.VerifyOptions{}); err != nil {
		t.Fatalf("the rewritten chain should verify as a chain: %v", err)
	}
	_, err = p.VerifyChain(ctx, audit.VerifyOptions{Head: &anchor})
	if ve, ok := audit.AsVerifyError(err); !ok || ve.Problem != audit.ProblemAnchor {
		t.Errorf("a chain rewritten from scratch against the anchored head: %v", err)
	}
}
