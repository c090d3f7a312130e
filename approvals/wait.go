package approvals

import (
	"context"
	"fmt"
	"time"
)

// Outcome is how a Wait ended.
type Outcome string

// The outcomes of Wait.
const (
	// Granted: an approval was found or given, and this call consumed it.
	Granted Outcome = "granted"
	// StillPending: the wait ran out; the request stays open.
	StillPending Outcome = "pending"
	// Refused: the request was denied or expired; final for that request.
	Refused Outcome = "refused"
	// Canceled: the caller went away (ctx ended) while waiting.
	Canceled Outcome = "canceled"
	// Failed: no request could be opened or read; Result.Err says why
	// (ErrTooManyPending for the per-agent cap, or a store failure). The
	// call must be refused.
	Failed Outcome = "failed"
)

// Result is what Wait returns: the outcome and the request it concerns.
type Result struct {
	Outcome Outcome
	Request Request
	// Err is set with Outcome Failed.
	Err error
}

// WaitOptions bound one Wait.
type WaitOptions struct {
	// Wait is how long the call waits for a decision (default DefaultWait).
	Wait time.Duration
	// Progress, when set, is called once a request is open (so the caller
	// can tell the client its id) and every ProgressEvery after that.
	Progress      func(r Request, elapsed time.Duration)
	ProgressEvery time.Duration
	// Opened, when set, is called once when this Wait opens a new request
	// (the elicitation approver starts there).
	Opened func(r Request)
}

// Wait is the call side of the broker: it consumes an approval of key if
// one is ready, else joins the pending request of key (opening one with
// info if there is none) and waits for a decision until opts.Wait ends.
// A denial or expiry not yet reported to any caller is reported once.
func (b *Broker) Wait(ctx context.Context, key Key, info Info, opts WaitOptions) Result {
	if opts.Wait <= 0 {
		opts.Wait = DefaultWait
	}
	if b.store != nil {
		return b.waitStore(ctx, key, info, opts)
	}
	start := time.Now()
	deadline := time.NewTimer(opts.Wait)
	defer deadline.Stop()
	var tick <-chan time.Time
	if opts.Progress != nil && opts.ProgressEvery > 0 {
		t := time.NewTicker(opts.ProgressEvery)
		defer t.Stop()
		tick = t.C
	}
	told := ""
	for {
		res, e, err := b.acquire(key, info, opts.Opened)
		if err != nil {
			return Result{Outcome: Failed, Err: err}
		}
		if e == nil {
			return res
		}
		if opts.Progress != nil {
			if snap := b.snapshot(e); told != snap.ID {
				told = snap.ID
				opts.Progress(snap, time.Since(start))
			}
		}
	waiting:
		for {
			select {
			case <-e.done:
				b.mu.Lock()
				req := e.req
				if req.State == Denied || req.State == Expired {
					e.reported = true
					b.mu.Unlock()
					return Result{Outcome: Refused, Request: req}
				}
				b.mu.Unlock()
				// Approved (claim it) or used by an identical call that won
				// the race (open a new request): acquire again.
				break waiting
			case <-tick:
				opts.Progress(b.snapshot(e), time.Since(start))
			case <-deadline.C:
				return Result{Outcome: StillPending, Request: b.snapshot(e)}
			case <-ctx.Done():
				return Result{Outcome: Canceled, Request: b.snapshot(e)}
			}
		}
	}
}

func (b *Broker) snapshot(e *entry) Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return e.req
}

// acquire decides what a call of key does now, under the lock: consume a
// ready approval, report an unreported denial or expiry, or wait on the
// pending request (returned as e, opened here if there is none).
func (b *Broker) acquire(key Key, info Info, opened func(Request)) (res Result, e *entry, err error) {
	now := time.Now()
	var changed Request
	created := false
	b.mu.Lock()
	if cur := b.latest[key]; cur != nil {
		if (cur.req.State == Pending || cur.req.State == Approved) && !now.Before(cur.req.Expires) {
			b.expireLocked(cur, now)
			changed = cur.req
		}
		switch cur.req.State {
		case Approved:
			cur.req.State = Used
			if cur.timer != nil {
				cur.timer.Stop()
			}
			res = Result{Outcome: Granted, Request: cur.req}
		case Pending:
			e = cur
		case Denied, Expired:
			if !cur.reported {
				cur.reported = true
				res = Result{Outcome: Refused, Request: cur.req}
			}
		}
	}
	if res.Outcome == "" && e == nil {
		if n := b.pendingOfLocked(key.Agent, now); n >= b.maxPending {
			b.mu.Unlock()
			if changed.ID != "" {
				b.notify(changed)
			}
			return res, nil, fmt.Errorf("%w: agent %q has %d waiting (the cap is gateway.approvals.max_pending = %d); decide or let some expire first",
				ErrTooManyPending, key.Agent, n, b.maxPending)
		}
		b.pruneLocked(now)
		e = b.newEntry(key, info, now)
		b.byID[e.req.ID] = e
		b.latest[key] = e
		b.armLocked(e)
		created = true
	}
	var snap Request
	if e != nil {
		snap = e.req
	}
	b.mu.Unlock()
	if changed.ID != "" {
		b.notify(changed)
	}
	if res.Outcome == Granted {
		b.notify(Request{})
	}
	if created {
		b.notify(Request{})
		if b.onOpened != nil {
			b.onOpened(snap)
		}
		if opened != nil {
			opened(snap)
		}
	}
	return res, e, nil
}

// pendingOfLocked counts agent's live pending requests.
func (b *Broker) pendingOfLocked(agent string, now time.Time) int {
	n := 0
	for _, e := range b.byID {
		if e.req.Agent == agent && e.req.State == Pending && now.Before(e.req.Expires) {
			n++
		}
	}
	return n
}
