package state

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// dialect is what differs between SQLite and PostgreSQL for the shared SQL
// of approvals, tasks and jobs.
type dialect struct {
	name string
	// postgres rewrites ? placeholders to $n.
	postgres bool
	// lock serialises transactions on one key across processes (PostgreSQL:
	// an advisory transaction lock); nil where every write transaction is
	// already exclusive (SQLite BEGIN IMMEDIATE).
	lock func(ctx context.Context, tx *sql.Tx, key string) error
	// notify tells other processes, at commit, that topic changed
	// (PostgreSQL NOTIFY); nil where they notice by themselves (SQLite
	// data_version polling).
	notify func(ctx context.Context, tx *sql.Tx, topic string) error
}

// Topics of change notifications.
const (
	topicApprovals = "approvals"
	topicTasks     = "tasks"
	topicJobs      = "jobs"
)

// sqlStore is the SQL shared by both backends.
type sqlStore struct {
	db       *sql.DB
	d        dialect
	hubs     map[string]*hub
	describe string
}

func newSQLStore(db *sql.DB, d dialect, describe string) *sqlStore {
	return &sqlStore{db: db, d: d, describe: describe, hubs: map[string]*hub{
		topicApprovals: newHub(), topicTasks: newHub(), topicJobs: newHub(), topicAudit: newHub(),
	}}
}

// q adapts a query written with ? placeholders to the dialect.
func (s *sqlStore) q(query string) string { return s.d.rebind(query) }

// rebind adapts a query written with ? placeholders to the dialect.
func (d dialect) rebind(query string) string {
	if !d.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// inTx runs fn in a write transaction, locked on lockKey when the dialect
// needs it; when fn reports a change, other processes are notified at
// commit and this process's subscribers right after.
func (s *sqlStore) inTx(ctx context.Context, topic, lockKey string, fn func(tx *sql.Tx) (bool, error)) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap("begin transaction", err)
	}
	defer tx.Rollback()
	if lockKey != "" && s.d.lock != nil {
		if err := s.d.lock(ctx, tx, lockKey); err != nil {
			return s.wrap("lock", err)
		}
	}
	changed, err := fn(tx)
	if err != nil {
		return err
	}
	if changed && s.d.notify != nil {
		if err := s.d.notify(ctx, tx, topic); err != nil {
			return s.wrap("notify", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.wrap("commit", err)
	}
	if changed {
		s.hubs[topic].wake()
	}
	return nil
}

// wrap names the store and the operation in an error.
func (s *sqlStore) wrap(op string, err error) error {
	return fmt.Errorf("state %s: %s: %w", s.describe, op, err)
}

// Describe names the store for people.
func (s *sqlStore) Describe() string { return s.describe }

// ns stores a time as Unix nanoseconds; the zero time is 0.
func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNS is the inverse of ns, in UTC.
func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return "null"
	}
	return string(b)
}

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

func affected(res sql.Result, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
