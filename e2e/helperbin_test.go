package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// builtOnce is a helper program of this module (a stand-in server, a
// recorder), built once per test binary beside the toolgate binary, so
// TestMain removes it with that directory.
type builtOnce struct {
	once sync.Once
	path string
	err  error
}

// binary builds pkg (a path relative to e2e/) as name on first use and
// returns its path; a failed build fails every test that needs it.
func (b *builtOnce) binary(t testing.TB, name, pkg string) string {
	t.Helper()
	b.once.Do(func() {
		b.path = filepath.Join(filepath.Dir(binary), name)
		if out, err := exec.Command("go", "build", "-o", b.path, pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %v\n%s", name, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// The helper programs the tests build.
var recorderBuild, hostileBuild, confServerBuild, sidefxBuild builtOnce
