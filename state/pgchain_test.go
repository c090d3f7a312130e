package state

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state/pgtest"
)

// TestChainOutage: PostgreSQL stops mid-run. Appends fail (closed: the
// audited call is refused), nothing half-written stays, and once the
// server is back appends continue on one chain that verifies and holds
// every event whose Append succeeded.
func TestChainOutage(t *testing.T) {
	t.Parallel()
	c := pgtest.Need(t) // a cluster of its own: this test stops it
	dsn := c.NewDatabase(t)
	p, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	chain := p.AuditChain(audit.Options{})
	defer chain.Close()

	var mu sync.Mutex
	ok := map[int64]string{} // seq → hash of every acknowledged event
	var fails, okCount atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ev := &audit.Event{Agent: "w", Decision: "deny", Reason: string(rune('a' + w))}
				if err := chain.Append(ev); err != nil {
					fails.Add(1)
					continue
				}
				okCount.Add(1)
				mu.Lock()
				ok[ev.Seq] = ev.Hash
				mu.Unlock()
			}
		}()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				close(stop)
				wg.Wait()
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(5 * time.Millisecond) // polling a condition with a deadline
		}
	}
	waitFor("appends before the outage", func() bool { return okCount.Load() > 50 })
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	before := okCount.Load()
	waitFor("appends to fail", func() bool { return fails.Load() > 20 })
	if err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	waitFor("appends after the restart", func() bool { return okCount.Load() > before+50 })
	close(stop)
	wg.Wait()

	var export bytes.Buffer
	if _, err := p.Export(context.Background(), &export, 0); err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Verify(bytes.NewReader(export.Bytes()))
	if err != nil {
		t.Fatalf("chain after the outage: %v", err)
	}
	stored := map[int64]string{}
	if err := p.eachLine(context.Background(), 0, 1<<30, func(seq int64, line []byte) error {
		var h struct{ Hash string }
		_ = jsonUnmarshal(line, &h)
		stored[seq] = h.Hash
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for seq, hash := range ok {
		if stored[seq] != hash {
			t.Fatalf("acknowledged event seq %d (hash %s) is not in the chain (found %q)", seq, hash, stored[seq])
		}
	}
	t.Logf("%d appends acknowledged, %d refused during the outage; the chain holds %d events and verifies (%d more than acknowledged: commits whose answer was lost)",
		len(ok), fails.Load(), rep.Events, rep.Events-len(ok))
	if rep.Events < len(ok) || rep.Events > len(ok)+4 {
		t.Errorf("chain has %d events for %d acknowledged appends; at most one in-flight batch per writer may be unacknowledged", rep.Events, len(ok))
	}
}

// TestChainSigned: the PostgreSQL chain writes checkpoints like the file,
// and its export verifies with the public key; rows deleted from its end
// are detected.
func TestChainSigned(t *testing.T) {
	t.Parallel()
	dsn := needPG(t)
	ctx := context.Background()
	p, err := OpenPostgres(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	chain := p.AuditChain(audit.Options{SigningKey: priv, CheckpointEvery: 10})
	for range 25 {
		if err := chain.Append(&audit.Event{Agent: "a", Decision: "deny"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := chain.Close(); err != nil {
		t.Fatal(err)
	}
	if err := chain.Append(&audit.Event{}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("append after close: %v", err)
	}
	rep, err := p.VerifyChain(ctx, audit.VerifyOptions{PublicKey: pub})
	if err != nil || rep.Checkpoints != 3 || rep.Events != 28 {
		t.Fatalf("signed chain: %+v %v, want 28 events with 3 checkpoints", rep, err)
	}
	if _, err := p.db.Exec(`DELETE FROM audit_events WHERE seq > 25`); err != nil {
		t.Fatal(err)
	}
	if _, err := p.VerifyChain(ctx, audit.VerifyOptions{PublicKey: pub}); err == nil {
		t.Error("rows deleted from the end verified under the public key")
	}
	if _, err := p.VerifyChain(ctx, audit.VerifyOptions{}); err != nil {
		t.Errorf("without a key the shortened chain still verifies as a chain: %v", err)
	}
}
