//go:build unix

package gateway

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestStampFollowsRename: a file replaced by another of the same size and
// time (a ConfigMap's symlink swap, an editor's rename) has a new stamp:
// its inode differs.
func TestStampFollowsRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, other := filepath.Join(dir, "toolgate.yaml"), filepath.Join(dir, "next.yaml")
	when := time.Now().Add(-time.Minute)
	for _, p := range []string{path, other} {
		if err := os.WriteFile(p, []byte("same"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
	before := stampOf(path)
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	after := stampOf(path)
	if after == before || after.ino == before.ino || after.size != before.size || after.mtime != before.mtime {
		t.Errorf("before %+v after %+v: want only the inode to differ", before, after)
	}
}
