//go:build !unix

package gateway

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStampWithoutInodes: where there are no inode numbers the stamp is the
// size and time alone.
func TestStampWithoutInodes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if err := os.WriteFile(path, []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st := stampOf(path); !st.ok || st.size != 3 || st.ino != 0 || st.dev != 0 {
		t.Errorf("stamp %+v", st)
	}
}
