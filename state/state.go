// Package state is where approvals, tasks, background-job records and (on
// PostgreSQL) the audit chain live, shared by every toolgate process of a
// deployment:
//
//   - embedded (the default, no configuration): SQLite through the pure-Go
//     modernc.org/sqlite in WAL mode, in a directory beside the workspace
//     (gateway.state.path, ".toolgate"), safe for several processes on one
//     machine; the audit stays the JSONL file of package audit;
//   - PostgreSQL (gateway.state.postgres.dsn), for several machines:
//     approvals, tasks, jobs and the audit chain are rows.
//
// Trust boundary: the store holds what the gateway decided; anything that
// can write the SQLite file or the database can approve calls. The files
// are created 0600 in a 0700 directory; the DSN is a secret and never
// appears in an error message.
package state

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
)

// Store is one deployment's shared state. Both backends implement it.
type Store interface {
	approvals.Store
	Tasks
	Jobs
	// OpenAudit returns the audit sink of this store: the JSONL file at
	// path for the embedded store, the chain in the database (path
	// ignored) for PostgreSQL.
	OpenAudit(path string, opts audit.Options) (audit.Sink, error)
	// RecordRevision returns the generation of the workspace revision
	// (its content hash) a process now has in force: the newest
	// generation's number if it is that revision, else the next number,
	// recorded. Generations only grow, so approvals and tasks bound to one
	// are never revived by a file that returns to older content.
	RecordRevision(ctx context.Context, revision string) (int64, error)
	// Secret returns the deployment's 32-byte secret called name, created
	// at random on first use: every process of the deployment gets the
	// same bytes (the key that seals the MCP requestState toolgate issues).
	Secret(ctx context.Context, name string) ([]byte, error)
	// Describe names the store for people (a path, or host/database —
	// never a password).
	Describe() string
	// Close releases connections and stops the change watcher.
	Close() error
}

// TaskStatus is where a task is in its life (MCP 2026-07-28 tasks).
type TaskStatus string

// The task statuses; completed, failed and cancelled are final.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Final reports whether s is a terminal status.
func (s TaskStatus) Final() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

func (s TaskStatus) valid() bool {
	return s == TaskWorking || s == TaskInputRequired || s.Final()
}

// Task is one task record. It belongs to Agent: every read and write is
// scoped to the agent, and another agent's task answers like an unknown one.
type Task struct {
	ID         string `json:"id"`
	Agent      string `json:"agent"`
	Surface    string `json:"surface"`
	Action     string `json:"action"`
	ArgsSHA256 string `json:"args_sha256"`
	Revision   string `json:"revision"`
	// Generation is the revision's generation (Store.RecordRevision).
	Generation int64 `json:"generation"`
	// ApprovalID is the approval the held call waits on, if any.
	ApprovalID string `json:"approval_id,omitempty"`
	// DownstreamServer and DownstreamTask route a proxied task.
	DownstreamServer string          `json:"downstream_server,omitempty"`
	DownstreamTask   string          `json:"downstream_task,omitempty"`
	Status           TaskStatus      `json:"status"`
	Result           json.RawMessage `json:"result,omitempty"`
	StatusMessage    string          `json:"status_message,omitempty"`
	Created          time.Time       `json:"created"`
	Updated          time.Time       `json:"updated"`
	Expires          time.Time       `json:"expires"`
}

// TaskUpdate changes a task; zero fields stay as they are.
type TaskUpdate struct {
	Status         TaskStatus
	Result         json.RawMessage
	StatusMessage  string
	DownstreamTask string
}

// DefaultTaskTTL is how long a task is kept when Create is given no TTL.
const DefaultTaskTTL = time.Hour

// ErrNoTask answers for an unknown, expired or other agent's task alike.
var ErrNoTask = errors.New("no such task")

// ErrTaskFinal refuses changing a task that already ended.
var ErrTaskFinal = errors.New("the task has already ended")

// Tasks are the task records of the store.
type Tasks interface {
	// CreateTask stores t as a new task with a fresh unguessable id,
	// status working unless set, kept for ttl (0: DefaultTaskTTL).
	CreateTask(ctx context.Context, t Task, ttl time.Duration) (Task, error)
	// GetTask returns agent's task id, or ErrNoTask.
	GetTask(ctx context.Context, agent, id string) (Task, error)
	// ListTasks returns agent's unexpired tasks, newest first.
	ListTasks(ctx context.Context, agent string) ([]Task, error)
	// UpdateTask applies u to agent's task id; ErrTaskFinal once it ended.
	UpdateTask(ctx context.Context, agent, id string, u TaskUpdate) (Task, error)
	// CancelTask ends agent's task id as cancelled (ErrTaskFinal if it
	// already ended).
	CancelTask(ctx context.Context, agent, id, message string) (Task, error)
	// PruneTasks deletes expired tasks and returns how many.
	PruneTasks(ctx context.Context, now time.Time) (int, error)
	// WatchTasks wakes (coalesced) after any task change by any process.
	WatchTasks() (<-chan struct{}, func())
}

// Job is the record of one background job, so that job-status from any
// process of the deployment sees it; the process that started the job keeps
// running it and writes its changes.
type Job struct {
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	Surface string    `json:"surface"`
	Command string    `json:"command"`
	State   string    `json:"state"`
	Exit    *int      `json:"exit,omitempty"`
	Started time.Time `json:"started"`
	Ended   time.Time `json:"ended,omitzero"`
	Error   string    `json:"error,omitempty"`
}

// ErrNoJob answers for an unknown or other agent's job alike.
var ErrNoJob = errors.New("no such job")

// Jobs are the background-job records of the store.
type Jobs interface {
	// PutJob creates or replaces the record j.ID (the owning process
	// writes it when the job starts and when it ends).
	PutJob(ctx context.Context, j Job) error
	// GetJob returns agent's job id, or ErrNoJob.
	GetJob(ctx context.Context, agent, id string) (Job, error)
	// ListJobs returns agent's jobs, newest first.
	ListJobs(ctx context.Context, agent string) ([]Job, error)
	// PruneJobs deletes jobs that ended before cutoff.
	PruneJobs(ctx context.Context, cutoff time.Time) (int, error)
}

// Config says which store to open: Postgres when DSN is set, else the
// embedded store in Dir.
type Config struct {
	// Dir is the embedded store's directory (gateway.state.path resolved
	// against the workspace's directory).
	Dir string
	// DSN is the PostgreSQL connection string (gateway.state.postgres.dsn).
	DSN string
}

// Open opens the store cfg names.
func Open(ctx context.Context, cfg Config) (Store, error) {
	if cfg.DSN != "" {
		return OpenPostgres(ctx, cfg.DSN)
	}
	if cfg.Dir == "" {
		return nil, errors.New("state: no directory for the embedded store (set gateway.state.path)")
	}
	return OpenEmbedded(ctx, cfg.Dir)
}
