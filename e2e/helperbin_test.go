package e2e

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// startListening runs bin with args (which give it -addr 127.0.0.1:0), waits
// for its first stdout line "listening ADDR" and returns its streamable HTTP
// endpoint, http://ADDR/mcp. The process is killed when the test ends.
func startListening(t testing.TB, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("%s did not start: %v", filepath.Base(bin), err)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening ")) + "/mcp"
}
