package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// topicAudit wakes followers of the chain (audit tail --follow).
const topicAudit = "audit"

// chainTimeout bounds one batch's transaction: past it the appends fail
// (closed) rather than hold the calls they audit.
const chainTimeout = 30 * time.Second

// Chain is the audit chain in PostgreSQL: the same lines, bytes and hashes
// as the JSONL log, one row per event. Every batch of the group commit is
// one transaction that locks the head row, so the appends of all replicas
// form one chain; a failed transaction leaves nothing behind.
type Chain struct {
	p         *Postgres
	signer    *audit.Signer
	batch     *audit.Batcher
	heads     *audit.HeadAnnouncer
	closeOnce sync.Once
	closeErr  error
}

// OpenAudit returns the database's audit chain; path is ignored. The
// head it finds is announced (audit.Options.OnHead, Logger) as the file
// log announces its own at open.
func (p *Postgres) OpenAudit(_ string, opts audit.Options) (audit.Sink, error) {
	c := p.AuditChain(opts)
	if c.heads != nil {
		ctx, cancel := context.WithTimeout(context.Background(), chainTimeout)
		defer cancel()
		var head audit.Head
		// Unreadable now, it is announced with the first commit instead.
		if p.db.QueryRowContext(ctx, `SELECT seq, hash FROM audit_head WHERE id = 1`).Scan(&head.Seq, &head.Hash) == nil {
			c.heads.Opened(head)
		}
	}
	return c, nil
}

// AuditChain returns an appender to the chain; opts.Fsync is moot (a
// commit is durable) and opts.SigningKey adds checkpoints as in the file.
func (p *Postgres) AuditChain(opts audit.Options) *Chain {
	c := &Chain{p: p, signer: audit.NewSigner(opts.SigningKey, opts.CheckpointEvery), heads: audit.NewHeadAnnouncer(opts)}
	c.batch = audit.NewBatcher(audit.ObserveCommit(c.commit, opts.OnCommit))
	return c
}

// Append records ev as the next event of the chain (see audit.Sink).
func (c *Chain) Append(ev *audit.Event) error {
	if ev == nil {
		return errors.New("audit: Append of a nil event")
	}
	return c.batch.Append(ev)
}

// Stats returns batches and events committed by this appender.
func (c *Chain) Stats() (batches, events int64) { return c.batch.Stats() }

// Close waits for pending appends and writes the closing checkpoint.
func (c *Chain) Close() error {
	c.closeOnce.Do(func() {
		c.batch.Close()
		defer c.heads.Close()
		if c.signer == nil {
			return
		}
		_, c.closeErr = c.write(func(head audit.Head) ([]audit.Line, []error, audit.Head) {
			cp, ok, _ := c.signer.CloseCheckpoint(head, time.Now())
			if !ok {
				return nil, nil, head
			}
			return []audit.Line{cp}, nil, audit.Head{Seq: cp.Event.Seq, Hash: cp.Hash, Sealed: true}
		})
	})
	return c.closeErr
}

func (c *Chain) commit(evs []*audit.Event) ([]error, error) {
	return c.write(func(head audit.Head) ([]audit.Line, []error, audit.Head) {
		return audit.SealBatch(head, evs, c.signer, time.Now())
	})
}

// write runs one batch transaction: lock the head, seal onto it, insert the
// lines, move the head, commit.
func (c *Chain) write(seal func(audit.Head) ([]audit.Line, []error, audit.Head)) ([]error, error) {
	ctx, cancel := context.WithTimeout(context.Background(), chainTimeout)
	defer cancel()
	p := c.p
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, p.auditErr("begin", err)
	}
	defer tx.Rollback()
	var head audit.Head
	if err := tx.QueryRowContext(ctx, `SELECT seq, hash, sealed FROM audit_head WHERE id = 1 FOR UPDATE`).Scan(&head.Seq, &head.Hash, &head.Sealed); err != nil {
		return nil, p.auditErr("lock the chain head", err)
	}
	lines, errs, next := seal(head)
	if len(lines) == 0 {
		return errs, nil
	}
	for start := 0; start < len(lines); start += 1000 {
		chunk := lines[start:min(start+1000, len(lines))]
		var q strings.Builder
		q.WriteString(`INSERT INTO audit_events (seq, hash, time, agent, action, decision, line) VALUES `)
		args := make([]any, 0, 7*len(chunk))
		for i, ln := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
			ev := ln.Event
			args = append(args, ev.Seq, ln.Hash, ev.Time, ev.Agent, ev.Action, ev.Decision, ln.Bytes[:len(ln.Bytes)-1])
		}
		if _, err := tx.ExecContext(ctx, q.String(), args...); err != nil {
			return nil, p.auditErr("insert events", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE audit_head SET seq = $1, hash = $2, sealed = $3 WHERE id = 1`, next.Seq, next.Hash, next.Sealed); err != nil {
		return nil, p.auditErr("advance the chain head", err)
	}
	if err := pgNotify(ctx, tx, topicAudit); err != nil {
		return nil, p.auditErr("notify", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, p.auditErr("commit", err)
	}
	for _, ln := range lines {
		ln.Event.Hash = ln.Hash
	}
	c.heads.Committed(lines, next)
	return errs, nil
}

func (p *Postgres) auditErr(op string, err error) error {
	return fmt.Errorf("audit chain in %s: %s: %s (the call is refused until the database is reachable)", p.describe, op, scrub(err, p.cfg.Password))
}

// Export writes the chain's lines with seq > after, in order, as JSONL:
// exactly the bytes the file log would hold, so audit.Verify checks them.
func (p *Postgres) Export(ctx context.Context, w io.Writer, after int64) (last int64, err error) {
	last = after
	for {
		n := 0
		err := p.eachLine(ctx, last, 5000, func(seq int64, line []byte) error {
			n++
			last = seq
			if _, err := w.Write(line); err != nil {
				return err
			}
			_, err := w.Write([]byte("\n"))
			return err
		})
		if err != nil || n == 0 {
			return last, err
		}
	}
}

func (p *Postgres) eachLine(ctx context.Context, after int64, limit int, fn func(seq int64, line []byte) error) error {
	rows, err := p.db.QueryContext(ctx, `SELECT seq, line FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
	if err != nil {
		return p.auditErr("read events", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var line []byte
		if err := rows.Scan(&seq, &line); err != nil {
			return p.auditErr("read events", err)
		}
		if err := fn(seq, line); err != nil {
			return err
		}
	}
	return rows.Err()
}

// VerifyChain checks the chain in the database as audit.VerifyWith checks
// a file: the exported lines are verified as they stream.
func (p *Postgres) VerifyChain(ctx context.Context, opts audit.VerifyOptions) (audit.Report, error) {
	pr, pw := io.Pipe()
	go func() {
		_, err := p.Export(ctx, pw, 0)
		pw.CloseWithError(err)
	}()
	rep, err := audit.VerifyWith(pr, opts)
	pr.Close()
	return rep, err
}

// TailChain emits the chain's events like audit.Tail: the last opts.Last
// matching (all if 0), then with Follow every new one until ctx ends. A
// follower wakes on NOTIFY from any replica (and checks every second in
// case a notification was lost with a connection).
func (p *Postgres) TailChain(ctx context.Context, opts audit.TailOptions, emit func(audit.Record) error) error {
	changed, unsubscribe := p.hubs[topicAudit].subscribe()
	defer unsubscribe()
	var ring []audit.Record
	var last int64
	collect := func(seq int64, line []byte) error {
		last = seq
		rec := audit.Record{Line: int(seq), Raw: append([]byte(nil), line...)}
		if err := json.Unmarshal(line, &rec.Event); err != nil {
			return fmt.Errorf("seq %d is not an audit event (%v); run `toolgate audit verify`", seq, err)
		}
		if !opts.Filter.Match(&rec.Event) {
			return nil
		}
		ring = append(ring, rec)
		if opts.Last > 0 && len(ring) >= 2*opts.Last {
			ring = append(ring[:0], ring[len(ring)-opts.Last:]...)
		}
		return nil
	}
	for {
		before := last
		if err := p.eachLine(ctx, last, 5000, collect); err != nil {
			return err
		}
		if last == before {
			break
		}
	}
	if opts.Last > 0 && len(ring) > opts.Last {
		ring = ring[len(ring)-opts.Last:]
	}
	for _, rec := range ring {
		if err := emit(rec); err != nil {
			return err
		}
	}
	if !opts.Follow {
		return nil
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-tick.C:
		}
		err := p.eachLine(ctx, last, 5000, func(seq int64, line []byte) error {
			last = seq
			rec := audit.Record{Line: int(seq), Raw: append([]byte(nil), line...)}
			if err := json.Unmarshal(line, &rec.Event); err != nil {
				return fmt.Errorf("seq %d is not an audit event (%v)", seq, err)
			}
			if !opts.Filter.Match(&rec.Event) {
				return nil
			}
			return emit(rec)
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}
