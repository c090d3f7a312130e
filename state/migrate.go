package state

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migration is one step of the schema, numbered once for both backends:
// version N is the same step on SQLite and on PostgreSQL, whatever
// statements each needs for it (none, where a backend keeps that data
// elsewhere). Steps are applied in order, each in its own transaction,
// and recorded in schema_migrations.
type migration struct {
	version  int
	what     string
	sqlite   []string
	postgres []string
}

// migrations is the schema's history, oldest first. Append a step for a
// change; never renumber, reorder or edit a step that has shipped.
//
// Embedded databases made before the numbering was shared recorded the
// secrets table as version 2: such a database has 1 and 2 and no 3, so it
// gets step 3, whose CREATE … IF NOT EXISTS finds the table there, and
// ends at 3 with its rows untouched, like one made today.
var migrations = []migration{
	{version: 1, what: "approvals, tasks and jobs", sqlite: commonSchema, postgres: commonSchema},
	{version: 2, what: "the audit chain (on PostgreSQL; the embedded store's audit is a JSONL file)", postgres: auditSchema},
	{version: 3, what: "the deployment's shared secrets", sqlite: secretsSchema, postgres: secretsSchema},
	{version: 4, what: "revision generations, bound by approvals and tasks", sqlite: generationSchema, postgres: generationSchema},
}

// latestSchema is the version the last step of migrations brings a
// database to.
var latestSchema = migrations[len(migrations)-1].version

// commonSchema is the schema of approvals, tasks and jobs, the same SQL on
// both backends (times are Unix nanoseconds, JSON is text).
var commonSchema = []string{
	`CREATE TABLE IF NOT EXISTS approvals (
		id TEXT PRIMARY KEY,
		kind TEXT NOT NULL,
		agent TEXT NOT NULL, action TEXT NOT NULL, args_sha256 TEXT NOT NULL, revision TEXT NOT NULL,
		arguments TEXT NOT NULL, argv TEXT NOT NULL, tier TEXT NOT NULL, reason TEXT NOT NULL, payload TEXT NOT NULL,
		state TEXT NOT NULL, created BIGINT NOT NULL, expires BIGINT NOT NULL,
		decided_by TEXT NOT NULL, decided_at BIGINT NOT NULL, deny_reason TEXT NOT NULL,
		reported INTEGER NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS approvals_key ON approvals (agent, action, args_sha256, revision, created)`,
	`CREATE INDEX IF NOT EXISTS approvals_live ON approvals (state, expires)`,
	`CREATE TABLE IF NOT EXISTS tasks (
		id TEXT PRIMARY KEY,
		agent TEXT NOT NULL, surface TEXT NOT NULL, action TEXT NOT NULL, args_sha256 TEXT NOT NULL, revision TEXT NOT NULL,
		approval_id TEXT NOT NULL, downstream_server TEXT NOT NULL, downstream_task TEXT NOT NULL,
		status TEXT NOT NULL, result TEXT, status_message TEXT NOT NULL,
		created BIGINT NOT NULL, updated BIGINT NOT NULL, expires BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS tasks_agent ON tasks (agent, created)`,
	`CREATE INDEX IF NOT EXISTS tasks_expires ON tasks (expires)`,
	`CREATE TABLE IF NOT EXISTS jobs (
		id TEXT PRIMARY KEY,
		agent TEXT NOT NULL, surface TEXT NOT NULL, command TEXT NOT NULL, state TEXT NOT NULL,
		exit INTEGER, started BIGINT NOT NULL, ended BIGINT NOT NULL, error TEXT NOT NULL, updated BIGINT NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS jobs_agent ON jobs (agent, started)`,
}

// secretsSchema holds the deployment's shared secrets (the key that seals
// MCP requestState), created on first use by whichever process needs one.
var secretsSchema = []string{
	`CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value TEXT NOT NULL)`,
}

// generationSchema numbers the workspace revisions a deployment has had in
// force (revisions.go) and binds approvals (with the tool definition's
// digest) and tasks to that number. Rows made before it are generation 0,
// which no revision in force ever has, so they never run again.
var generationSchema = []string{
	`CREATE TABLE IF NOT EXISTS revisions (generation BIGINT PRIMARY KEY, revision TEXT NOT NULL, recorded BIGINT NOT NULL)`,
	`ALTER TABLE approvals ADD COLUMN generation BIGINT NOT NULL DEFAULT 0`,
	`ALTER TABLE approvals ADD COLUMN definition TEXT NOT NULL DEFAULT ''`,
	`ALTER TABLE tasks ADD COLUMN generation BIGINT NOT NULL DEFAULT 0`,
}

// auditSchema is the PostgreSQL audit chain: one head row, locked by each
// batch, and the events with their exact line bytes.
var auditSchema = []string{
	`CREATE TABLE IF NOT EXISTS audit_head (
		id INTEGER PRIMARY KEY CHECK (id = 1), seq BIGINT NOT NULL, hash TEXT NOT NULL, sealed BOOLEAN NOT NULL)`,
	`INSERT INTO audit_head (id, seq, hash, sealed) VALUES (1, 0, '', false) ON CONFLICT (id) DO NOTHING`,
	`CREATE TABLE IF NOT EXISTS audit_events (
		seq BIGINT PRIMARY KEY, hash TEXT NOT NULL, time TIMESTAMPTZ NOT NULL,
		agent TEXT NOT NULL, action TEXT NOT NULL, decision TEXT NOT NULL, line BYTEA NOT NULL)`,
	`CREATE INDEX IF NOT EXISTS audit_events_agent ON audit_events (agent, seq)`,
}

// migrate applies the steps of migrations not yet recorded, with the
// statements of d's backend, and refuses a database migrated further than
// this binary knows. The caller makes it safe against a second process
// migrating at once (SQLite: the write lock of BEGIN IMMEDIATE;
// PostgreSQL: an advisory lock held around the call).
func migrate(ctx context.Context, db *sql.DB, d dialect) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	if v, err := schemaVersion(ctx, db); err != nil {
		return err
	} else if v > latestSchema {
		return fmt.Errorf("the schema is at version %d, newer than this toolgate knows (%d): run the toolgate release that migrated it, or a newer one", v, latestSchema)
	}
	q := d.rebind
	for _, m := range migrations {
		stmts := m.sqlite
		if d.postgres {
			stmts = m.postgres
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, q(`SELECT count(*) FROM schema_migrations WHERE version = ?`), m.version).Scan(&n); err != nil {
			tx.Rollback()
			return fmt.Errorf("read schema_migrations: %w", err)
		}
		if n > 0 {
			tx.Rollback()
			continue
		}
		for _, stmt := range stmts {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				tx.Rollback()
				return fmt.Errorf("schema version %d (%s): %w", m.version, m.what, err)
			}
		}
		if _, err := tx.ExecContext(ctx, q(`INSERT INTO schema_migrations (version, applied) VALUES (?, ?)`), m.version, ns(time.Now())); err != nil {
			tx.Rollback()
			return fmt.Errorf("record schema version %d: %w", m.version, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("schema version %d (%s): %w", m.version, m.what, err)
		}
	}
	return nil
}

// schemaVersion is the highest version recorded in schema_migrations, 0
// for a database never migrated.
func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT max(version) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("read schema_migrations: %w", err)
	}
	return int(v.Int64), nil
}

// SchemaVersion is the schema version the store's database is at: the
// same number means the same schema on both backends.
func (s *sqlStore) SchemaVersion(ctx context.Context) (int, error) {
	return schemaVersion(ctx, s.db)
}
