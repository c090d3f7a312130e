package e2e

import (
	"runtime"
	"strings"
	"testing"
)

// TestOpsVersion: `toolgate version` and `toolgate --version` print the
// same line, from the binary's build info (the e2e binary is a work-tree
// build: "(devel)", and the Go it was built with), never a placeholder.
func TestOpsVersion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sub := toolgate(t, dir, nil, "version")
	flag := toolgate(t, dir, nil, "--version")
	if sub.code != 0 || flag.code != 0 {
		t.Fatalf("exit codes %d, %d; stderr %q %q", sub.code, flag.code, sub.stderr, flag.stderr)
	}
	if sub.stdout != flag.stdout {
		t.Errorf("version %q, --version %q: want the same line", sub.stdout, flag.stdout)
	}
	line := strings.TrimSpace(sub.stdout)
	if !strings.HasPrefix(line, "toolgate ") || strings.Contains(line, "toolgate dev") {
		t.Errorf("version line %q: want toolgate <module version> from the build info", line)
	}
	if !strings.Contains(line, runtime.Version()) {
		t.Errorf("version line %q does not name the Go that built it (%s)", line, runtime.Version())
	}
}
