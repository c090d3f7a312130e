// Package e2e drives the built toolgate binary against real clients, real
// MCP peers and real programs (jq, git), the way an operator and a harness
// use it.
package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// binary is the toolgate executable built once for the whole package;
// argvEcho prints its argv as JSON (testdata/argvecho).
var binary, argvEcho string

// coverEnvVar, set to a directory, builds binary with -cover and collects
// the coverage of every run of it there (GOCOVERDIR), so that what only
// the end-to-end tests reach (the CLI, the supervisor) is counted;
// scripts/coverage.sh merges it with the unit tests' profiles.
const coverEnvVar = "TOOLGATE_E2E_COVER"

// coverEnv is what an environment built from scratch (a harness CLI's)
// adds so that the binary it launches still writes its coverage.
func coverEnv() []string {
	if dir := os.Getenv("GOCOVERDIR"); dir != "" {
		return []string{"GOCOVERDIR=" + dir}
	}
	return nil
}

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "toolgate-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	defer closeFleetPG() // the PostgreSQL cluster the fleet tests share
	binary = filepath.Join(dir, "toolgate")
	args := []string{"build", "-o", binary}
	if cover := os.Getenv(coverEnvVar); cover != "" {
		// Every run of the binary, by a test or by a harness a test
		// drives, writes its counters into cover (GOCOVERDIR).
		abs, err := filepath.Abs(cover)
		if err == nil {
			err = os.MkdirAll(abs, 0o755)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", coverEnvVar, cover, err)
			return 1
		}
		args = append(args, "-cover")
		os.Setenv("GOCOVERDIR", abs)
	}
	build := exec.Command("go", append(args, "../cmd/toolgate")...)
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build toolgate:", err)
		return 1
	}
	argvEcho = filepath.Join(dir, "argvecho")
	build = exec.Command("go", "build", "-o", argvEcho, "./testdata/argvecho")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build argvecho:", err)
		return 1
	}
	return m.Run()
}

// repoRoot is the repository's top directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// result is what one run of the binary produced.
type result struct {
	code           int
	stdout, stderr string
}

// toolgate runs the built binary with args in dir and the given extra env.
func toolgate(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run toolgate %v: %v", args, err)
	}
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}
