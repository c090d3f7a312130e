package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/approvals"
)

const approvalCols = `id, agent, action, args_sha256, revision, arguments, argv, tier, reason, payload,
	state, created, expires, decided_by, decided_at, deny_reason, reported, generation, definition`

// keepFinished is how long ended approval requests stay queryable by id.
const keepFinished = time.Hour

func scanApproval(sc rowScanner) (approvals.Request, bool, error) {
	var r approvals.Request
	var args, argv, payload, st string
	var created, expires, decidedAt int64
	var reported int
	err := sc.Scan(&r.ID, &r.Agent, &r.Action, &r.ArgsSHA256, &r.Revision, &args, &argv, &r.Tier, &r.Reason, &payload,
		&st, &created, &expires, &r.DecidedBy, &decidedAt, &r.DenyReason, &reported, &r.Generation, &r.Definition)
	if err != nil {
		return r, false, err
	}
	r.Arguments = json.RawMessage(args)
	if argv != "" && argv != "null" {
		_ = json.Unmarshal([]byte(argv), &r.Argv)
	}
	_ = json.Unmarshal([]byte(payload), &r.Payload)
	r.State, r.Created, r.Expires, r.DecidedAt = approvals.State(st), fromNS(created), fromNS(expires), fromNS(decidedAt)
	return r, reported != 0, nil
}

func (s *sqlStore) insertApproval(ctx context.Context, tx *sql.Tx, r approvals.Request, kind string) error {
	args := string(r.Arguments)
	if args == "" {
		args = "null"
	}
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO approvals (`+approvalCols+`, kind)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?)`),
		r.ID, r.Agent, r.Action, r.ArgsSHA256, r.Revision, args, jsonText(r.Argv), r.Tier, r.Reason, jsonText(r.Payload),
		string(r.State), ns(r.Created), ns(r.Expires), r.DecidedBy, ns(r.DecidedAt), r.DenyReason, r.Generation, r.Definition, kind)
	if err != nil {
		return s.wrap("insert approval request", err)
	}
	return nil
}

// expireOne moves r (live, past its expiry) to Expired if it still is what
// was read; ok tells whether this call did it.
func (s *sqlStore) expireOne(ctx context.Context, tx *sql.Tx, r *approvals.Request, now time.Time) (bool, error) {
	ok, err := affected(tx.ExecContext(ctx, s.q(`UPDATE approvals SET state = 'expired',
		decided_at = CASE WHEN state = 'pending' THEN ? ELSE decided_at END
		WHERE id = ? AND state = ?`), ns(now), r.ID, string(r.State)))
	if err != nil || !ok {
		return false, err
	}
	if r.State == approvals.Pending {
		r.DecidedAt = now.UTC()
	}
	r.State = approvals.Expired
	return true, nil
}

// AcquireApproval implements approvals.Store; see there. The transaction
// is serialised per agent (SQLite: BEGIN IMMEDIATE; PostgreSQL: an advisory
// lock on the agent), which also makes the per-agent cap exact, and every
// transition in it is a conditional UPDATE.
func (s *sqlStore) AcquireApproval(ctx context.Context, a approvals.Acquire) (approvals.Acquired, error) {
	var res approvals.Acquired
	err := s.inTx(ctx, topicApprovals, "approvals:"+a.Key.Agent, func(tx *sql.Tx) (bool, error) {
		res = approvals.Acquired{}
		k := a.Key
		cur, reported, err := scanApproval(tx.QueryRowContext(ctx, s.q(`SELECT `+approvalCols+` FROM approvals
			WHERE agent = ? AND action = ? AND args_sha256 = ? AND revision = ? AND generation = ? AND definition = ? AND kind = 'request'
			ORDER BY created DESC, id DESC LIMIT 1`), k.Agent, k.Action, k.ArgsSHA256, k.Revision, k.Generation, k.Definition))
		found := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return false, s.wrap("read approval request", err)
		}
		changed := false
		if found && (cur.State == approvals.Pending || cur.State == approvals.Approved) && !a.Now.Before(cur.Expires) {
			ok, err := s.expireOne(ctx, tx, &cur, a.Now)
			if err != nil {
				return false, s.wrap("expire approval request", err)
			}
			if ok {
				res.Expired = append(res.Expired, cur)
				changed = true
			}
		}
		if found {
			switch cur.State {
			case approvals.Approved:
				ok, err := affected(tx.ExecContext(ctx, s.q(`UPDATE approvals SET state = 'used' WHERE id = ? AND state = 'approved'`), cur.ID))
				if err != nil {
					return false, s.wrap("consume approval", err)
				}
				if ok {
					cur.State = approvals.Used
					res.Outcome, res.Request = approvals.Granted, cur
					return true, nil
				}
			case approvals.Pending:
				res.Outcome, res.Request = approvals.StillPending, cur
				return changed, nil
			case approvals.Denied, approvals.Expired:
				if !reported {
					ok, err := affected(tx.ExecContext(ctx, s.q(`UPDATE approvals SET reported = 1 WHERE id = ? AND reported = 0`), cur.ID))
					if err != nil {
						return false, s.wrap("report approval decision", err)
					}
					if ok {
						res.Outcome, res.Request = approvals.Refused, cur
						return true, nil
					}
				}
			}
		}
		if a.MaxPending > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, s.q(`SELECT count(*) FROM approvals WHERE agent = ? AND state = 'pending' AND expires > ?`),
				k.Agent, ns(a.Now)).Scan(&n); err != nil {
				return false, s.wrap("count pending approvals", err)
			}
			if n >= a.MaxPending {
				return changed, fmt.Errorf("%w: agent %q has %d waiting (the cap is gateway.approvals.max_pending = %d); decide or let some expire first",
					approvals.ErrTooManyPending, k.Agent, n, a.MaxPending)
			}
		}
		r := approvals.Request{
			ID: a.NewID, Agent: k.Agent, Action: k.Action, ArgsSHA256: k.ArgsSHA256, Revision: k.Revision,
			Generation: k.Generation, Definition: k.Definition,
			Arguments: a.Info.Arguments, Argv: a.Info.Argv, Tier: a.Info.Tier, Reason: a.Info.Reason, Payload: a.Info.Payload,
			State: approvals.Pending, Created: a.Now.UTC(), Expires: a.Now.Add(a.TTL).UTC(),
		}
		if err := s.insertApproval(ctx, tx, r, "request"); err != nil {
			return false, err
		}
		res.Outcome, res.Request, res.Opened = approvals.StillPending, r, true
		return true, nil
	})
	if err != nil && errors.Is(err, approvals.ErrTooManyPending) {
		// The transaction rolled back; expiries found on the way are
		// redone by the next sweep, so nothing is reported twice.
		res.Expired = nil
	}
	return res, err
}

// DecideApproval implements approvals.Store with one conditional UPDATE.
func (s *sqlStore) DecideApproval(ctx context.Context, d approvals.Decide) (approvals.Request, bool, error) {
	var out approvals.Request
	expired := false
	var outErr error
	err := s.inTx(ctx, topicApprovals, "", func(tx *sql.Tx) (bool, error) {
		r, _, err := scanApproval(tx.QueryRowContext(ctx, s.q(`UPDATE approvals SET state = ?, decided_by = ?, decided_at = ?, deny_reason = ?,
			expires = CASE WHEN ? = 'approved' THEN ? ELSE expires END
			WHERE id = ? AND state = 'pending' AND expires > ? AND kind = 'request'
			RETURNING `+approvalCols), string(d.To), d.By, ns(d.Now), d.Reason, string(d.To), ns(d.Now.Add(d.TTL)), d.ID, ns(d.Now)))
		if err == nil {
			out = r
			return true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, s.wrap("decide approval request", err)
		}
		cur, _, err := scanApproval(tx.QueryRowContext(ctx, s.q(`SELECT `+approvalCols+` FROM approvals WHERE id = ?`), d.ID))
		if errors.Is(err, sql.ErrNoRows) {
			outErr = fmt.Errorf("%w %q (it was never issued, or ended long ago)", approvals.ErrNotFound, d.ID)
			return false, nil
		}
		if err != nil {
			return false, s.wrap("read approval request", err)
		}
		if cur.State == approvals.Pending {
			ok, err := s.expireOne(ctx, tx, &cur, d.Now)
			if err != nil {
				return false, s.wrap("expire approval request", err)
			}
			expired = ok
			out = cur
		}
		outErr = fmt.Errorf("%w: %s is %s", approvals.ErrFinal, d.ID, cur.State)
		return expired, nil
	})
	if err != nil {
		return approvals.Request{}, false, err
	}
	return out, expired, outErr
}

// MarkReported implements approvals.Store.
func (s *sqlStore) MarkReported(ctx context.Context, id string) error {
	return s.inTx(ctx, topicApprovals, "", func(tx *sql.Tx) (bool, error) {
		ok, err := affected(tx.ExecContext(ctx, s.q(`UPDATE approvals SET reported = 1 WHERE id = ? AND reported = 0`), id))
		if err != nil {
			return false, s.wrap("report approval decision", err)
		}
		return ok, nil
	})
}

// InsertApproval implements approvals.Store.
func (s *sqlStore) InsertApproval(ctx context.Context, r approvals.Request) error {
	kind := "request"
	if r.State == approvals.Used {
		kind = "grant"
	}
	return s.inTx(ctx, topicApprovals, "", func(tx *sql.Tx) (bool, error) {
		return true, s.insertApproval(ctx, tx, r, kind)
	})
}

// GetApproval implements approvals.Store.
func (s *sqlStore) GetApproval(ctx context.Context, id string) (approvals.Request, error) {
	r, _, err := scanApproval(s.db.QueryRowContext(ctx, s.q(`SELECT `+approvalCols+` FROM approvals WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w %q", approvals.ErrNotFound, id)
	}
	if err != nil {
		return r, s.wrap("read approval request", err)
	}
	return r, nil
}

// PendingApprovals implements approvals.Store.
func (s *sqlStore) PendingApprovals(ctx context.Context, now time.Time) ([]approvals.Request, error) {
	return s.listApprovals(ctx, `SELECT `+approvalCols+` FROM approvals WHERE state = 'pending' AND expires > ? ORDER BY created, id`, ns(now))
}

func (s *sqlStore) listApprovals(ctx context.Context, query string, args ...any) ([]approvals.Request, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.wrap("list approval requests", err)
	}
	defer rows.Close()
	var out []approvals.Request
	for rows.Next() {
		r, _, err := scanApproval(rows)
		if err != nil {
			return nil, s.wrap("list approval requests", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("list approval requests", err)
	}
	return out, nil
}

// ExpireApprovals implements approvals.Store: one UPDATE … RETURNING, so
// each expiry is returned to exactly one caller in the deployment. It also
// forgets requests that ended over an hour ago.
func (s *sqlStore) ExpireApprovals(ctx context.Context, now time.Time) ([]approvals.Request, error) {
	var out []approvals.Request
	err := s.inTx(ctx, topicApprovals, "", func(tx *sql.Tx) (bool, error) {
		out = nil
		rows, err := tx.QueryContext(ctx, s.q(`UPDATE approvals SET state = 'expired',
			decided_at = CASE WHEN state = 'pending' THEN ? ELSE decided_at END
			WHERE state IN ('pending', 'approved') AND expires <= ? AND kind = 'request'
			RETURNING `+approvalCols), ns(now), ns(now))
		if err != nil {
			return false, s.wrap("expire approval requests", err)
		}
		for rows.Next() {
			r, _, err := scanApproval(rows)
			if err != nil {
				rows.Close()
				return false, s.wrap("expire approval requests", err)
			}
			out = append(out, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, s.wrap("expire approval requests", err)
		}
		cut := ns(now.Add(-keepFinished))
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM approvals WHERE state IN ('denied', 'expired', 'used') AND created < ? AND decided_at < ?`), cut, cut); err != nil {
			return false, s.wrap("prune approval requests", err)
		}
		return len(out) > 0, nil
	})
	return out, err
}

// WatchApprovals implements approvals.Store.
func (s *sqlStore) WatchApprovals() (<-chan struct{}, func()) {
	return s.hubs[topicApprovals].subscribe()
}
