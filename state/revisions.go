package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// topicRevisions names the lock that serialises recording a revision; no
// process subscribes to it.
const topicRevisions = "revisions"

// RecordRevision implements Store.RecordRevision. In one transaction,
// serialised across processes, it reads the newest generation: the same
// revision keeps its number, any other gets the next one. So every process
// of a deployment that loads the same file agrees on its generation, and a
// file edited and then reverted gets a new one — an approval bound to the
// first never runs under the third.
func (s *sqlStore) RecordRevision(ctx context.Context, revision string) (int64, error) {
	if revision == "" {
		return 0, errors.New("state: record revision: the revision is empty")
	}
	var gen int64
	err := s.inTx(ctx, topicRevisions, topicRevisions, func(tx *sql.Tx) (bool, error) {
		var last int64
		var lastRev string
		err := tx.QueryRowContext(ctx, `SELECT generation, revision FROM revisions ORDER BY generation DESC LIMIT 1`).Scan(&last, &lastRev)
		switch {
		case err == nil && lastRev == revision:
			gen = last
			return false, nil
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return false, s.wrap("read revision generation", err)
		}
		gen = last + 1
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO revisions (generation, revision, recorded) VALUES (?, ?, ?)`), gen, revision, ns(time.Now())); err != nil {
			return false, s.wrap(fmt.Sprintf("record revision generation %d", gen), err)
		}
		return false, nil
	})
	return gen, err
}
