package state

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/toolgate/toolgate/approvals"
)

const ruleCols = `id, effect, agent, action, revision, generation, definition, grant_text, args_sha256, tier, from_request, decided_by, reason, created, expires, expired`

// keepRules is how long ended timed rules stay in the table.
const keepRules = 24 * time.Hour

func scanRule(sc rowScanner) (approvals.TimedRule, error) {
	var t approvals.TimedRule
	var effect string
	var created, expires int64
	var expired int
	err := sc.Scan(&t.ID, &effect, &t.Agent, &t.Action, &t.Revision, &t.Generation, &t.Definition, &t.Grant, &t.ArgsSHA256, &t.Tier, &t.From, &t.By, &t.Reason,
		&created, &expires, &expired)
	t.Effect, t.Created, t.Expires, t.Expired = approvals.State(effect), fromNS(created), fromNS(expires), expired != 0
	return t, err
}

// insertRule stores a timed rule, in the transaction of its decision.
func (s *sqlStore) insertRule(ctx context.Context, tx *sql.Tx, t approvals.TimedRule) error {
	_, err := tx.ExecContext(ctx, s.q(`INSERT INTO approval_rules (`+ruleCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`),
		t.ID, string(t.Effect), t.Agent, t.Action, t.Revision, t.Generation, t.Definition, t.Grant, t.ArgsSHA256, t.Tier, t.From, t.By, t.Reason, ns(t.Created), ns(t.Expires))
	if err != nil {
		return s.wrap("insert timed approval rule", err)
	}
	return nil
}

// MatchApprovalRule implements approvals.Store: the live rules of the
// call's agent, tool and revision, decided by approvals.TimedRule.Covers
// so that the store and the in-memory broker agree.
func (s *sqlStore) MatchApprovalRule(ctx context.Context, q approvals.RuleQuery) (approvals.TimedRule, bool, error) {
	rules, err := s.listRules(ctx, `SELECT `+ruleCols+` FROM approval_rules
		WHERE agent = ? AND action = ? AND revision = ? AND expired = 0 AND expires > ? ORDER BY created, id`,
		q.Key.Agent, q.Key.Action, q.Key.Revision, ns(q.Now))
	if err != nil {
		return approvals.TimedRule{}, false, err
	}
	var found approvals.TimedRule
	ok := false
	for _, t := range rules {
		if t.Covers(q.Key, q.Grant, q.Now) && (!ok || t.Effect == approvals.Denied) {
			found, ok = t, true
		}
	}
	return found, ok, nil
}

// ApprovalRules implements approvals.Store.
func (s *sqlStore) ApprovalRules(ctx context.Context, now time.Time) ([]approvals.TimedRule, error) {
	return s.listRules(ctx, `SELECT `+ruleCols+` FROM approval_rules WHERE expired = 0 AND expires > ? ORDER BY created, id`, ns(now))
}

func (s *sqlStore) listRules(ctx context.Context, query string, args ...any) ([]approvals.TimedRule, error) {
	rows, err := s.db.QueryContext(ctx, s.q(query), args...)
	if err != nil {
		return nil, s.wrap("read timed approval rules", err)
	}
	defer rows.Close()
	var out []approvals.TimedRule
	for rows.Next() {
		t, err := scanRule(rows)
		if err != nil {
			return nil, s.wrap("read timed approval rules", err)
		}
		out = append(out, t)
	}
	return out, s.wrapNil("read timed approval rules", rows.Err())
}

// ExpireApprovalRules implements approvals.Store: one UPDATE … RETURNING,
// so each rule's end is returned to exactly one caller in the deployment.
// Rules that ended a day ago are forgotten.
func (s *sqlStore) ExpireApprovalRules(ctx context.Context, now time.Time) ([]approvals.TimedRule, error) {
	var out []approvals.TimedRule
	err := s.inTx(ctx, topicApprovals, "", func(tx *sql.Tx) (bool, error) {
		out = nil
		rows, err := tx.QueryContext(ctx, s.q(`UPDATE approval_rules SET expired = 1 WHERE expired = 0 AND expires <= ? RETURNING `+ruleCols), ns(now))
		if err != nil {
			return false, s.wrap("expire timed approval rules", err)
		}
		for rows.Next() {
			t, err := scanRule(rows)
			if err != nil {
				rows.Close()
				return false, s.wrap("expire timed approval rules", err)
			}
			out = append(out, t)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return false, s.wrap("expire timed approval rules", err)
		}
		if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM approval_rules WHERE expired = 1 AND expires < ?`), ns(now.Add(-keepRules))); err != nil {
			return false, s.wrap("prune timed approval rules", err)
		}
		return len(out) > 0, nil
	})
	return out, err
}

// wrapNil is wrap for an error that may be nil.
func (s *sqlStore) wrapNil(op string, err error) error {
	if err == nil || errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return s.wrap(op, err)
}
