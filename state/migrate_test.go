package state

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
)

// versioned is what both stores answer beyond Store: the schema version.
type versioned interface {
	Store
	SchemaVersion(ctx context.Context) (int, error)
}

// TestSchemaVersionShared: one numbering — a fresh embedded store and a
// fresh PostgreSQL store record the same versions, 1 to the latest, and
// report the same schema version.
func TestSchemaVersionShared(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := must[*Embedded](t)(OpenEmbedded(ctx, t.TempDir()))
	defer e.Close()
	p := must[*Postgres](t)(OpenPostgres(ctx, needPG(t)))
	defer p.Close()
	var want []int
	for _, m := range migrations {
		want = append(want, m.version)
	}
	for _, s := range []versioned{e, p} {
		v, err := s.SchemaVersion(ctx)
		if err != nil || v != latestSchema {
			t.Errorf("%s: schema version %d %v, want %d", s.Describe(), v, err, latestSchema)
		}
		if got := recordedVersions(t, dbOf(s)); !slices.Equal(got, want) {
			t.Errorf("%s: schema_migrations holds %v, want %v", s.Describe(), got, want)
		}
	}
	if !slices.IsSortedFunc(migrations, func(a, b migration) int { return a.version - b.version }) || migrations[0].version != 1 ||
		latestSchema != len(migrations) {
		t.Fatalf("migrations are not numbered 1…n in order: %v", migrations)
	}
}

// TestMigrateForward: a database left at an older version, holding an
// approval, a task, a job, a secret (and on PostgreSQL audit events), is
// brought to the latest version by opening it, and every row is still
// there. The older states are made as those releases left them: a fresh
// store with the later steps' tables dropped and their records removed.
func TestMigrateForward(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		postgres bool
		keep     []int    // versions left recorded
		drop     []string // tables the later steps create
	}{
		// Before the numbering was shared, the embedded store recorded its
		// secrets table as version 2.
		{name: "embedded, old numbering (secrets as 2)", keep: []int{1, 2}, drop: []string{"revisions"}},
		{name: "embedded at 1", keep: []int{1}, drop: []string{"secrets", "revisions"}},
		{name: "embedded at 3", keep: []int{1, 2, 3}, drop: []string{"revisions"}},
		{name: "postgres at 3", postgres: true, keep: []int{1, 2, 3}, drop: []string{"revisions"}},
		{name: "postgres at 2", postgres: true, keep: []int{1, 2}, drop: []string{"secrets", "revisions"}},
		{name: "postgres at 1", postgres: true, keep: []int{1}, drop: []string{"secrets", "audit_events", "audit_head", "revisions"}},
	}
	// Every case predates step 4, which also added these columns.
	step4Columns := []string{"approvals.generation", "approvals.definition", "tasks.generation"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var open func() versioned
			if tc.postgres {
				dsn := needPG(t)
				open = func() versioned { return must[*Postgres](t)(OpenPostgres(ctx, dsn)) }
			} else {
				dir := filepath.Join(t.TempDir(), ".toolgate")
				open = func() versioned { return must[*Embedded](t)(OpenEmbedded(ctx, dir)) }
			}
			s := open()
			seeded := seed(t, s, slices.Contains(tc.keep, 2) && tc.postgres)
			db := dbOf(s)
			for _, table := range tc.drop {
				if _, err := db.ExecContext(ctx, "DROP TABLE "+table); err != nil {
					t.Fatal(err)
				}
			}
			for _, col := range step4Columns {
				table, column, _ := strings.Cut(col, ".")
				if _, err := db.ExecContext(ctx, "ALTER TABLE "+table+" DROP COLUMN "+column); err != nil {
					t.Fatal(err)
				}
			}
			q := func(s string) string { return s }
			if tc.postgres {
				q = dialect{postgres: true}.rebind
			}
			for _, m := range migrations {
				if !slices.Contains(tc.keep, m.version) {
					if _, err := db.ExecContext(ctx, q(`DELETE FROM schema_migrations WHERE version = ?`), m.version); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got := recordedVersions(t, db); !slices.Equal(got, tc.keep) {
				t.Fatalf("older state %v, want %v", got, tc.keep)
			}
			s.Close()

			s = open()
			defer s.Close()
			if v, err := s.SchemaVersion(ctx); err != nil || v != latestSchema {
				t.Fatalf("after migrating: version %d %v, want %d", v, err, latestSchema)
			}
			seeded.check(t, s, tc.postgres, !slices.Contains(tc.drop, "secrets"))
		})
	}
}

// TestMigrateRefusesNewer: a database a later release migrated further
// is refused, saying which version and what to run, not used half-known.
func TestMigrateRefusesNewer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, postgres := range []bool{false, true} {
		var open func() (versioned, error)
		if postgres {
			dsn := needPG(t)
			open = func() (versioned, error) { return OpenPostgres(ctx, dsn) }
		} else {
			dir := t.TempDir()
			open = func() (versioned, error) { return OpenEmbedded(ctx, dir) }
		}
		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		q := dialect{postgres: postgres}.rebind
		if _, err := dbOf(s).ExecContext(ctx, q(`INSERT INTO schema_migrations (version, applied) VALUES (?, ?)`), latestSchema+1, ns(time.Now())); err != nil {
			t.Fatal(err)
		}
		s.Close()
		_, err = open()
		want := fmt.Sprintf("the schema is at version %d, newer than this toolgate knows (%d)", latestSchema+1, latestSchema)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("postgres=%v: err %v, want %q", postgres, err, want)
		}
	}
}

// seeded is what seed wrote, to find again after migrating.
type seeded struct {
	approvalID, taskID, jobID string
	secret                    []byte
	auditHashes               []string
}

func seed(t *testing.T, s versioned, withAudit bool) seeded {
	t.Helper()
	ctx := context.Background()
	now := time.Now().Truncate(time.Millisecond)
	var out seeded
	out.approvalID = "ap-" + t.Name()
	r := testRequest(out.approvalID, now)
	if err := s.InsertApproval(ctx, r); err != nil {
		t.Fatal(err)
	}
	task, err := s.CreateTask(ctx, Task{Agent: "writer", Surface: "git", Action: "command:call:git:push", StatusMessage: "held"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	out.taskID = task.ID
	out.jobID = "job-1"
	if err := s.PutJob(ctx, Job{ID: out.jobID, Agent: "writer", Surface: "git", Command: "push", State: "running", Started: now}); err != nil {
		t.Fatal(err)
	}
	if out.secret, err = s.Secret(ctx, "request-state"); err != nil {
		t.Fatal(err)
	}
	if withAudit {
		sink, err := s.OpenAudit("", audit.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			ev := &audit.Event{Agent: "writer", Action: "command:call:git:push", Decision: "allow", Reason: fmt.Sprint("event ", i)}
			if err := sink.Append(ev); err != nil {
				t.Fatal(err)
			}
			out.auditHashes = append(out.auditHashes, ev.Hash)
		}
		if err := sink.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func (w seeded) check(t *testing.T, s versioned, postgres, secretKept bool) {
	t.Helper()
	ctx := context.Background()
	if r, err := s.GetApproval(ctx, w.approvalID); err != nil || r.Reason != testInfo.Reason || r.Agent != "writer" {
		t.Errorf("approval after migrating: %+v %v", r, err)
	}
	if task, err := s.GetTask(ctx, "writer", w.taskID); err != nil || task.StatusMessage != "held" {
		t.Errorf("task after migrating: %+v %v", task, err)
	}
	if j, err := s.GetJob(ctx, "writer", w.jobID); err != nil || j.State != "running" {
		t.Errorf("job after migrating: %+v %v", j, err)
	}
	// A secret kept through the migration reads back the same; one whose
	// table the older release did not have is created anew.
	secret, err := s.Secret(ctx, "request-state")
	if err != nil || len(secret) != 32 {
		t.Fatalf("secret after migrating: %x %v", secret, err)
	}
	if secretKept && !bytes.Equal(secret, w.secret) {
		t.Errorf("secret changed across the migration: %x → %x", w.secret, secret)
	}
	if !postgres {
		return
	}
	// The audit chain continues where it was, or starts on a database that
	// had none.
	sink, err := s.OpenAudit("", audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	ev := &audit.Event{Agent: "writer", Action: "command:call:git:push", Decision: "allow", Reason: "after"}
	if err := sink.Append(ev); err != nil {
		t.Fatal(err)
	}
	if want := int64(len(w.auditHashes) + 1); ev.Seq != want {
		t.Errorf("first event after migrating has seq %d, want %d", ev.Seq, want)
	}
	if len(w.auditHashes) > 0 && ev.Prev != w.auditHashes[len(w.auditHashes)-1] {
		t.Errorf("chain broken across the migration: prev %s, want %s", ev.Prev, w.auditHashes[len(w.auditHashes)-1])
	}
}

func testRequest(id string, now time.Time) approvals.Request {
	return approvals.Request{ID: id, Agent: testKey.Agent, Action: testKey.Action, ArgsSHA256: testKey.ArgsSHA256, Revision: testKey.Revision,
		Arguments: testInfo.Arguments, Argv: testInfo.Argv, Tier: testInfo.Tier, Reason: testInfo.Reason, Payload: testInfo.Payload,
		State: approvals.Pending, Created: now, Expires: now.Add(time.Hour)}
}

func recordedVersions(t *testing.T, db *sql.DB) []int {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func dbOf(s versioned) *sql.DB {
	switch s := s.(type) {
	case *Embedded:
		return s.db
	case *Postgres:
		return s.db
	}
	panic(fmt.Sprintf("no database in %T", s))
}
