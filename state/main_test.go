package state

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/state/pgtest"
)

// The tests of this package share one throwaway PostgreSQL cluster (each
// test gets a database of its own); tests that stop the server start their
// own. Child processes started by the multi-process tests skip it.
var (
	sharedPG    *pgtest.Cluster
	sharedPGErr error
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		sharedPG, sharedPGErr = pgtest.Start()
	}
	code := m.Run()
	if sharedPG != nil {
		sharedPG.Close()
	}
	os.Exit(code)
}

// needPG returns a fresh database's DSN on the shared cluster; a missing
// PostgreSQL skips the test (fails it under CI=true).
func needPG(t testing.TB) string {
	t.Helper()
	pgtest.Check(t, sharedPGErr)
	return sharedPG.NewDatabase(t)
}

// forBackends runs fn once per backend; open returns another Store on the
// same state each time (another replica or process of one deployment).
func forBackends(t *testing.T, fn func(t *testing.T, open func(t testing.TB) Store)) {
	t.Helper()
	t.Run("embedded", func(t *testing.T) {
		t.Parallel()
		dir := filepath.Join(t.TempDir(), ".toolgate")
		fn(t, func(t testing.TB) Store {
			s, err := OpenEmbedded(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		dsn := needPG(t)
		fn(t, func(t testing.TB) Store {
			s, err := OpenPostgres(context.Background(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		})
	})
}

// helperEnv selects the child-process role of the multi-process tests.
const helperEnv = "TOOLGATE_STATE_HELPER"

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}
