package approvals

import (
	"context"
	"time"
)

// storeTimeout bounds one store operation started by a method without a
// context of its own (Get, Pending, Approve, Deny, Grant).
const storeTimeout = 10 * time.Second

// GetContext returns the request with id, in whatever state it is, or
// ErrNotFound (or the store's error).
func (b *Broker) GetContext(ctx context.Context, id string) (Request, error) {
	if b.store == nil {
		if r, ok := b.Get(id); ok {
			return r, nil
		}
		return Request{}, ErrNotFound
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return b.store.GetApproval(ctx, id)
}

// PendingContext lists the requests waiting for a decision, oldest first,
// from every process of the deployment when the broker has a store.
func (b *Broker) PendingContext(ctx context.Context) ([]Request, error) {
	if b.store == nil {
		return b.Pending(), nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return b.store.PendingApprovals(ctx, time.Now())
}

// ApproveContext is Approve with a context (the store may be remote).
func (b *Broker) ApproveContext(ctx context.Context, id, by string) (Request, error) {
	return b.decideContext(ctx, id, Approved, by, "")
}

// DenyContext is Deny with a context.
func (b *Broker) DenyContext(ctx context.Context, id, by, reason string) (Request, error) {
	return b.decideContext(ctx, id, Denied, by, reason)
}

func (b *Broker) decideContext(ctx context.Context, id string, to State, by, reason string) (Request, error) {
	if b.store == nil {
		return b.decide(id, to, by, reason)
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	r, expired, err := b.store.DecideApproval(ctx, Decide{ID: id, To: to, By: by, Reason: reason, Now: time.Now(), TTL: b.ttl})
	if err == nil || expired {
		// This process's update made the transition: it alone reports it.
		b.report(r)
	}
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// GrantContext is Grant with a context and the store's error.
func (b *Broker) GrantContext(ctx context.Context, key Key, info Info, by string) (Request, error) {
	if b.store == nil {
		return b.grantMem(key, info, by), nil
	}
	now := time.Now().UTC()
	r := Request{
		ID: newID(), Agent: key.Agent, Action: key.Action, ArgsSHA256: key.ArgsSHA256, Revision: key.Revision,
		Generation: key.Generation, Definition: key.Definition,
		Arguments: info.Arguments, Argv: info.Argv, Tier: info.Tier, Reason: info.Reason, Payload: info.Payload,
		State: Used, Created: now, Expires: now.Add(b.ttl), DecidedBy: by, DecidedAt: now,
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	return r, b.store.InsertApproval(ctx, r)
}

// report calls OnDecision for a transition this process made.
func (b *Broker) report(rs ...Request) {
	if b.onDecision == nil {
		return
	}
	for _, r := range rs {
		if r.ID != "" && r.State != Pending {
			b.onDecision(r)
		}
	}
}

// sweeper expires due requests in the store; ExpireApprovals hands each
// expiry to exactly one sweeping process, which reports it.
func (b *Broker) sweeper() {
	defer close(b.sweepDone)
	t := time.NewTicker(b.sweep)
	defer t.Stop()
	for {
		select {
		case <-b.stopSweep:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		expired, err := b.store.ExpireApprovals(ctx, time.Now())
		cancel()
		if err == nil {
			b.report(expired...)
		}
	}
}

// waitStore is Wait on a store: acquire in one transaction, then wait for
// a change notification (from any process), the request's expiry, the
// wait's end or the caller leaving, and look again.
func (b *Broker) waitStore(ctx context.Context, key Key, info Info, opts WaitOptions) Result {
	start := time.Now()
	// Subscribe before the first look, so a decision landing between the
	// look and the wait still wakes it.
	changed, unsubscribe := b.store.WatchApprovals()
	defer unsubscribe()
	deadline := time.NewTimer(opts.Wait)
	defer deadline.Stop()
	recheck := time.NewTicker(b.recheck)
	defer recheck.Stop()
	var tick <-chan time.Time
	if opts.Progress != nil && opts.ProgressEvery > 0 {
		t := time.NewTicker(opts.ProgressEvery)
		defer t.Stop()
		tick = t.C
	}
	told := ""
	var last Request
	for {
		if ctx.Err() != nil && last.ID != "" {
			// The caller left while the request waited: that is not a
			// store failure.
			return Result{Outcome: Canceled, Request: last}
		}
		actx, cancel := context.WithTimeout(ctx, storeTimeout)
		acq, err := b.store.AcquireApproval(actx, Acquire{Key: key, Info: info, Now: time.Now(), TTL: b.ttl, MaxPending: b.maxPending, NewID: newID()})
		cancel()
		b.report(acq.Expired...)
		if err != nil {
			if ctx.Err() != nil && last.ID != "" {
				return Result{Outcome: Canceled, Request: last}
			}
			return Result{Outcome: Failed, Err: err}
		}
		if acq.Outcome != StillPending {
			return Result{Outcome: acq.Outcome, Request: acq.Request}
		}
		req := acq.Request
		last = req
		if acq.Opened && opts.Opened != nil {
			opts.Opened(req)
		}
		if opts.Progress != nil && told != req.ID {
			told = req.ID
			opts.Progress(req, time.Since(start))
		}
		expiry := time.NewTimer(time.Until(req.Expires))
		res, again := b.awaitChange(ctx, req, changed, recheck.C, tick, deadline.C, expiry.C, opts, start)
		expiry.Stop()
		if !again {
			return res
		}
	}
}

// awaitChange waits until req is decided (again: acquire once more), the
// wait ends or the caller leaves (a final Result).
func (b *Broker) awaitChange(ctx context.Context, req Request, changed <-chan struct{}, recheck, tick, deadline, expiry <-chan time.Time,
	opts WaitOptions, start time.Time) (Result, bool) {
	for {
		select {
		case <-changed:
		case <-recheck:
		case <-expiry:
			return Result{}, true
		case <-tick:
			opts.Progress(req, time.Since(start))
			continue
		case <-deadline:
			return Result{Outcome: StillPending, Request: req}, false
		case <-ctx.Done():
			return Result{Outcome: Canceled, Request: req}, false
		}
		gctx, cancel := context.WithTimeout(ctx, storeTimeout)
		cur, err := b.store.GetApproval(gctx, req.ID)
		cancel()
		switch {
		case err != nil:
			// Gone (pruned) or unreadable for now: look again from the key.
			return Result{}, true
		case cur.State == Pending:
			req = cur
			continue
		case cur.State == Denied || cur.State == Expired:
			// Every call waiting on this request is told; the next one
			// opens a new request.
			mctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			_ = b.store.MarkReported(mctx, cur.ID)
			cancel()
			return Result{Outcome: Refused, Request: cur}, false
		default:
			// Approved: claim it (exactly one identical call wins); used by
			// another call: open a new request.
			return Result{}, true
		}
	}
}
