package state

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

const taskCols = `id, agent, surface, action, args_sha256, revision, approval_id, downstream_server, downstream_task,
	status, result, status_message, created, updated, expires, generation`

func scanTask(sc rowScanner) (Task, error) {
	var t Task
	var st string
	var result sql.NullString
	var created, updated, expires int64
	err := sc.Scan(&t.ID, &t.Agent, &t.Surface, &t.Action, &t.ArgsSHA256, &t.Revision, &t.ApprovalID, &t.DownstreamServer, &t.DownstreamTask,
		&st, &result, &t.StatusMessage, &created, &updated, &expires, &t.Generation)
	if err != nil {
		return t, err
	}
	t.Status = TaskStatus(st)
	if result.Valid {
		t.Result = json.RawMessage(result.String)
	}
	t.Created, t.Updated, t.Expires = fromNS(created), fromNS(updated), fromNS(expires)
	return t, nil
}

// newTaskID returns 128 random bits: a task id is a capability for whoever
// holds it, so it must not be guessable (it is also scoped to its agent).
func newTaskID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "tk-" + hex.EncodeToString(b[:]), nil
}

func nullJSON(r json.RawMessage) sql.NullString {
	if len(r) == 0 {
		return sql.NullString{}
	}
	return sql.NullString{String: string(r), Valid: true}
}

// CreateTask implements Tasks.
func (s *sqlStore) CreateTask(ctx context.Context, t Task, ttl time.Duration) (Task, error) {
	if ttl <= 0 {
		ttl = DefaultTaskTTL
	}
	if t.Status == "" {
		t.Status = TaskWorking
	}
	if !t.Status.valid() {
		return Task{}, fmt.Errorf("state: task status %q is not one of working, input_required, completed, failed, cancelled", t.Status)
	}
	if len(t.Result) > 0 && !json.Valid(t.Result) {
		return Task{}, errors.New("state: task result is not valid JSON")
	}
	id, err := newTaskID()
	if err != nil {
		return Task{}, err
	}
	now := time.Now().UTC()
	t.ID, t.Created, t.Updated, t.Expires = id, now, now, now.Add(ttl)
	err = s.inTx(ctx, topicTasks, "", func(tx *sql.Tx) (bool, error) {
		_, err := tx.ExecContext(ctx, s.q(`INSERT INTO tasks (`+taskCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
			t.ID, t.Agent, t.Surface, t.Action, t.ArgsSHA256, t.Revision, t.ApprovalID, t.DownstreamServer, t.DownstreamTask,
			string(t.Status), nullJSON(t.Result), t.StatusMessage, ns(t.Created), ns(t.Updated), ns(t.Expires), t.Generation)
		if err != nil {
			return false, s.wrap("create task", err)
		}
		return true, nil
	})
	return t, err
}

// GetTask implements Tasks.
func (s *sqlStore) GetTask(ctx context.Context, agent, id string) (Task, error) {
	return s.getTask(ctx, s.db, agent, id)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *sqlStore) getTask(ctx context.Context, db querier, agent, id string) (Task, error) {
	t, err := scanTask(db.QueryRowContext(ctx, s.q(`SELECT `+taskCols+` FROM tasks WHERE id = ? AND agent = ? AND expires > ?`),
		id, agent, ns(time.Now())))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, ErrNoTask
	}
	if err != nil {
		return Task{}, s.wrap("read task", err)
	}
	return t, nil
}

// ListTasks implements Tasks.
func (s *sqlStore) ListTasks(ctx context.Context, agent string) ([]Task, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+taskCols+` FROM tasks WHERE agent = ? AND expires > ? ORDER BY created DESC, id`),
		agent, ns(time.Now()))
	if err != nil {
		return nil, s.wrap("list tasks", err)
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, s.wrap("list tasks", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// UpdateTask implements Tasks: the change applies only while the task has
// not ended, checked in the same statement.
func (s *sqlStore) UpdateTask(ctx context.Context, agent, id string, u TaskUpdate) (Task, error) {
	if u.Status != "" && !u.Status.valid() {
		return Task{}, fmt.Errorf("state: task status %q is not one of working, input_required, completed, failed, cancelled", u.Status)
	}
	if len(u.Result) > 0 && !json.Valid(u.Result) {
		return Task{}, errors.New("state: task result is not valid JSON")
	}
	var out Task
	err := s.inTx(ctx, topicTasks, "", func(tx *sql.Tx) (bool, error) {
		now := time.Now()
		t, err := scanTask(tx.QueryRowContext(ctx, s.q(`UPDATE tasks SET
			status = CASE WHEN ? = '' THEN status ELSE ? END,
			result = CASE WHEN ? THEN ? ELSE result END,
			status_message = CASE WHEN ? = '' THEN status_message ELSE ? END,
			downstream_task = CASE WHEN ? = '' THEN downstream_task ELSE ? END,
			updated = ?
			WHERE id = ? AND agent = ? AND expires > ? AND status NOT IN ('completed', 'failed', 'cancelled')
			RETURNING `+taskCols),
			string(u.Status), string(u.Status), len(u.Result) > 0, nullJSON(u.Result), u.StatusMessage, u.StatusMessage,
			u.DownstreamTask, u.DownstreamTask, ns(now), id, agent, ns(now)))
		if errors.Is(err, sql.ErrNoRows) {
			if _, gerr := s.getTask(ctx, tx, agent, id); gerr != nil {
				return false, gerr
			}
			return false, ErrTaskFinal
		}
		if err != nil {
			return false, s.wrap("update task", err)
		}
		out = t
		return true, nil
	})
	return out, err
}

// CancelTask implements Tasks.
func (s *sqlStore) CancelTask(ctx context.Context, agent, id, message string) (Task, error) {
	return s.UpdateTask(ctx, agent, id, TaskUpdate{Status: TaskCancelled, StatusMessage: message})
}

// PruneTasks implements Tasks.
func (s *sqlStore) PruneTasks(ctx context.Context, now time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, topicTasks, "", func(tx *sql.Tx) (bool, error) {
		res, err := tx.ExecContext(ctx, s.q(`DELETE FROM tasks WHERE expires <= ?`), ns(now))
		if err != nil {
			return false, s.wrap("prune tasks", err)
		}
		n, _ = res.RowsAffected()
		return n > 0, nil
	})
	return int(n), err
}

// WatchTasks implements Tasks.
func (s *sqlStore) WatchTasks() (<-chan struct{}, func()) { return s.hubs[topicTasks].subscribe() }
