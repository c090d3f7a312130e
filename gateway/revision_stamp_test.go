package gateway

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStampOf: a file's stamp changes with its size or time and is zero
// for a file that is not there.
func TestStampOf(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	if st := stampOf(path); st != (fileStamp{}) {
		t.Fatalf("missing file: %+v", st)
	}
	if err := os.WriteFile(path, []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	first := stampOf(path)
	if !first.ok || first.size != 1 {
		t.Fatalf("stamp %+v", first)
	}
	if err := os.WriteFile(path, []byte("ab"), 0o644); err != nil {
		t.Fatal(err)
	}
	if second := stampOf(path); second == first {
		t.Error("a grown file has the same stamp")
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	if touched := stampOf(path); touched.mtime != old.UnixNano() {
		t.Errorf("mtime %d, want %d", touched.mtime, old.UnixNano())
	}
}
