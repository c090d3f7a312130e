package state

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

const jobCols = `id, agent, surface, command, state, exit, started, ended, error`

func scanJob(sc rowScanner) (Job, error) {
	var j Job
	var exit sql.NullInt64
	var started, ended int64
	if err := sc.Scan(&j.ID, &j.Agent, &j.Surface, &j.Command, &j.State, &exit, &started, &ended, &j.Error); err != nil {
		return j, err
	}
	if exit.Valid {
		e := int(exit.Int64)
		j.Exit = &e
	}
	j.Started, j.Ended = fromNS(started), fromNS(ended)
	return j, nil
}

// PutJob implements Jobs (an upsert on the job id; the agent of an
// existing record never changes, so one agent cannot take over another's).
func (s *sqlStore) PutJob(ctx context.Context, j Job) error {
	var exit sql.NullInt64
	if j.Exit != nil {
		exit = sql.NullInt64{Int64: int64(*j.Exit), Valid: true}
	}
	return s.inTx(ctx, topicJobs, "", func(tx *sql.Tx) (bool, error) {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO jobs (`+jobCols+`, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET state = excluded.state, exit = excluded.exit, ended = excluded.ended,
				error = excluded.error, updated = excluded.updated
			WHERE jobs.agent = excluded.agent`),
			j.ID, j.Agent, j.Surface, j.Command, j.State, exit, ns(j.Started), ns(j.Ended), j.Error, ns(time.Now()))
		if err != nil {
			return false, s.wrap("record job", err)
		}
		return true, nil
	})
}

// GetJob implements Jobs.
func (s *sqlStore) GetJob(ctx context.Context, agent, id string) (Job, error) {
	j, err := scanJob(s.db.QueryRowContext(ctx, s.q(`SELECT `+jobCols+` FROM jobs WHERE id = ? AND agent = ?`), id, agent))
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, ErrNoJob
	}
	if err != nil {
		return Job{}, s.wrap("read job", err)
	}
	return j, nil
}

// ListJobs implements Jobs.
func (s *sqlStore) ListJobs(ctx context.Context, agent string) ([]Job, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+jobCols+` FROM jobs WHERE agent = ? ORDER BY started DESC, id`), agent)
	if err != nil {
		return nil, s.wrap("list jobs", err)
	}
	defer rows.Close()
	var out []Job
	for rows.Next() {
		j, err := scanJob(rows)
		if err != nil {
			return nil, s.wrap("list jobs", err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// PruneJobs implements Jobs.
func (s *sqlStore) PruneJobs(ctx context.Context, cutoff time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, topicJobs, "", func(tx *sql.Tx) (bool, error) {
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM jobs WHERE ended <> 0 AND ended < ?`), ns(cutoff))
		if err != nil {
			return false, s.wrap("prune jobs", err)
		}
		n, _ = res.RowsAffected()
		return n > 0, nil
	})
	return int(n), err
}
