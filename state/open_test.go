package state

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestEmbeddedDamaged: a state file that is not a database, or a database
// whose pages were overwritten, refuses to open with a message that says
// which file and what to do.
func TestEmbeddedDamaged(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		damage func(t *testing.T, path string)
	}{
		{"not a database", func(t *testing.T, path string) {
			if err := os.WriteFile(path, bytes.Repeat([]byte("garbage!"), 1024), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"pages overwritten", func(t *testing.T, path string) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) < 4096*3 {
				t.Fatalf("database only %d bytes", len(data))
			}
			for i := 4096 + 100; i < len(data); i++ {
				data[i] ^= 0x5a
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s, err := OpenEmbedded(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 50 {
				if _, err := s.CreateTask(context.Background(), Task{Agent: "a", Surface: "s", Action: fmt.Sprint("x", i), StatusMessage: strings.Repeat("m", 200)}, time.Hour); err != nil {
					t.Fatal(err)
				}
			}
			s.Close() // checkpoints the WAL into the file
			path := filepath.Join(dir, DBFile)
			tt.damage(t, path)
			_, err = OpenEmbedded(context.Background(), dir)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "move it aside") {
				t.Fatalf("open of a damaged store: %v, want an error naming %s and what to do", err, path)
			}
		})
	}
}

// TestEmbeddedFilesPrivate: the state directory and database are not
// readable by other users (whoever can write them can approve calls).
func TestEmbeddedFilesPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".toolgate")
	s, err := OpenEmbedded(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range []string{dir, filepath.Join(dir, DBFile)} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s has mode %v, want no access for group or others", p, st.Mode().Perm())
		}
	}
}

// TestPostgresUnreachable: a DSN that cannot connect names what to fix and
// never shows the password; an unparsable one does not echo itself.
func TestPostgresUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close() // nothing listens there now
	const secret = "s3cr3t-Pa55word"
	tests := []struct {
		name, dsn string
		want      []string
	}{
		{"nothing listening", fmt.Sprintf("postgres://toolgate:%s@127.0.0.1:%d/fleet?sslmode=disable&connect_timeout=5", secret, port),
			[]string{"cannot connect to PostgreSQL at 127.0.0.1:" + fmt.Sprint(port), `database "fleet"`, `user "toolgate"`, "gateway.state.postgres.dsn"}},
		{"key=value form", fmt.Sprintf("host=127.0.0.1 port=%d user=toolgate password=%s dbname=fleet sslmode=disable connect_timeout=5", port, secret),
			[]string{"cannot connect", "gateway.state.postgres.dsn"}},
		{"unparsable", "postgres://toolgate:" + secret + "@127.0.0.1:notaport/fleet", []string{"cannot be parsed", "not shown"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := OpenPostgres(ctx, tt.dsn)
			if err == nil {
				t.Fatal("opened")
			}
			msg := err.Error()
			if strings.Contains(msg, secret) {
				t.Errorf("the error shows the password: %s", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
		})
	}
}

// TestPostgresWrongPassword: the server refuses the user; the message says
// so without the password.
func TestPostgresWrongUser(t *testing.T) {
	t.Parallel()
	dsn := needPG(t)
	bad := strings.Replace(dsn, "postgres://postgres@", "postgres://nosuchrole:hunter2-secret@", 1)
	_, err := OpenPostgres(context.Background(), bad)
	if err == nil || strings.Contains(err.Error(), "hunter2-secret") || !strings.Contains(err.Error(), `user "nosuchrole"`) {
		t.Fatalf("err = %v, want a refusal naming the user and not the password", err)
	}
}

// TestPostgresConcurrentMigration: replicas starting together on an empty
// database all open it; the schema is applied once.
func TestPostgresConcurrentMigration(t *testing.T) {
	t.Parallel()
	dsn := needPG(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := OpenPostgres(context.Background(), dsn)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s, err := OpenPostgres(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var n int
	// One row per migration step, each applied once.
	if err := s.db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(migrations) {
		t.Errorf("schema_migrations has %d rows (%v), want %d", n, err, len(migrations))
	}
}
