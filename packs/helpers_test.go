package packs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/workspace"
)

// testGetenv is a gateway environment: the four variables a command may
// inherit, plus one that must never reach it.
func testGetenv(t *testing.T) func(string) string {
	t.Helper()
	env := map[string]string{
		"PATH":          os.Getenv("PATH"),
		"HOME":          t.TempDir(),
		"LANG":          "C.UTF-8",
		"TMPDIR":        t.TempDir(),
		"GATEWAY_TOKEN": "gateway-secret-never-shared",
	}
	return func(k string) string { return env[k] }
}

// TestMain lets this test binary act as the containment watcher (and the
// portable helper and shim) when a runner re-executes it, as toolgate's
// main does.
func TestMain(m *testing.M) {
	MaybeSupervise()
	os.Exit(m.Run())
}

// testContain is the containment the package's runners share (one
// watcher for the whole test binary rather than one per runner), as a
// gateway shares one.
var testContain = contain.New(contain.Options{})

// newTestRunner is a runner as the gateway builds one: commands run
// contained (a cgroup per command where one can be made).
func newTestRunner(t *testing.T, creds map[string]string) *Runner {
	t.Helper()
	r := NewRunner(creds, testGetenv(t))
	r.KillGrace = 200 * time.Millisecond
	r.Contain = testContain
	return r
}

// command declares a one-command pack around argv, with every placeholder
// a string input.
func command(id string, argv ...string) *workspace.Command {
	props := map[string]any{}
	for _, p := range workspace.Placeholders(argv) {
		props[p] = map[string]any{"type": "string"}
	}
	return &workspace.Command{ID: id, Argv: argv, Inputs: map[string]any{"type": "object", "properties": props}}
}

func packOf(cmds ...*workspace.Command) *workspace.CommandPack {
	return &workspace.CommandPack{ID: "test", Commands: cmds}
}

// bundledJQ loads the bundled json-tools pack through the real loader.
func bundledJQ(t *testing.T) *workspace.CommandPack {
	t.Helper()
	ws := loadFixture(t, "testdata/jq-workspace.yaml")
	for _, p := range ws.CommandPacks {
		if p.ID == "json-tools" {
			return p
		}
	}
	t.Fatal("json-tools pack not loaded")
	return nil
}

func commandOf(t *testing.T, p *workspace.CommandPack, id string) *workspace.Command {
	t.Helper()
	for _, c := range p.Commands {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("pack %s has no command %s", p.ID, id)
	return nil
}

// mustRun prepares and runs one call, failing the test on a Go error.
func mustRun(t *testing.T, r *Runner, p *workspace.CommandPack, c *workspace.Command, args map[string]any) *Result {
	t.Helper()
	inv, err := r.Prepare(p, c, args)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	res, err := r.Run(context.Background(), inv)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// processGone reports whether pid no longer runs: it does not exist, or it
// is a zombie waiting for its new parent (init) to reap it.
func processGone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readPID reads the pid a test script wrote, waiting for the write.
func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, 5*time.Second, "no pid in "+path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// requireProgram fails the test when a real program it drives is missing.
func requireProgram(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := lookPathIn(n, os.Getenv("PATH"), ""); err != nil {
			t.Fatalf("%s is needed: %v", n, err)
		}
	}
}
