package gateway

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// conformance is the e2e conformance server (a real MCP server to proxy),
// built once for the whole test binary.
var conformance struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
}

func TestMain(m *testing.M) {
	code := m.Run()
	if conformance.dir != "" {
		os.RemoveAll(conformance.dir)
	}
	os.Exit(code)
}

// buildConformanceServer returns the conformance server's binary, building
// it on first use.
func buildConformanceServer(t testing.TB) string {
	t.Helper()
	c := &conformance
	c.once.Do(func() {
		if c.dir, c.err = os.MkdirTemp("", "toolgate-gateway-test-"); c.err != nil {
			return
		}
		c.bin = filepath.Join(c.dir, "conformance-server")
		c.out, c.err = exec.Command("go", "build", "-o", c.bin, "../e2e/conformance-server").CombinedOutput()
	})
	if c.err != nil {
		t.Fatalf("build conformance server: %v\n%s", c.err, c.out)
	}
	return c.bin
}
