//go:build linux

package packs

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/workspace"
)

// subreaperChildEnv marks a re-executed test binary that runs one test in
// session mode as a child subreaper, as the gateway's binary does (the
// test binary proper has other children, so never is one).
const subreaperChildEnv = "TOOLGATE_TEST_SUBREAPER_CHILD"

// eachMode runs body with a runner in each containment mode: cgroup in
// this process, and session with a subreaper in a child test process
// running only the test calling it.
func eachMode(t *testing.T, body func(t *testing.T, r *Runner)) {
	t.Helper()
	if os.Getenv(subreaperChildEnv) != "" {
		m := contain.New(contain.Options{Mode: contain.ModeSession, Subreaper: true})
		t.Cleanup(func() { m.Close() })
		r := newTestRunner(t, nil)
		r.Contain = m
		body(t, r)
		return
	}
	name := t.Name()
	t.Run("cgroup", func(t *testing.T) {
		t.Parallel()
		if testContain.Mode() != contain.ModeCgroup {
			if os.Getenv("CI") == "true" {
				t.Fatal("no cgroup can be made on this machine; CI machines have cgroup v2")
			}
			t.Skip("no cgroup can be made on this machine")
		}
		body(t, newTestRunner(t, nil))
	})
	t.Run("session", func(t *testing.T) {
		t.Parallel()
		cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), subreaperChildEnv+"=1")
		out, err := cmd.CombinedOutput()
		t.Logf("session mode, as a subreaper (child test process):\n%s", out)
		if err != nil {
			t.Fatalf("the child test failed: %v", err)
		}
	})
}

// TestContainStopsDetachedChildren: a child that calls setsid (or is
// double-forked, or whose command kills its helper) leaves the process
// group, so a group kill misses it; it is stopped whenever the call ends.
func TestContainStopsDetachedChildren(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "setsid", "sleep")
	// detach starts a process that left the group and ignores SIGTERM,
	// writing its pid to $1, and waits until it has.
	const detach = `setsid sh -c 'trap "" TERM; echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; while :; do sleep 1; done' sh "$1" & while [ ! -s "$1" ]; do sleep 0.01; done;`
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		cancel  bool
		want    string // in Result.Err; "" for success
	}{
		{name: "command exits", script: detach + ` exit 0`},
		{name: "double fork", script: `(sh -c 'trap "" TERM; exec sleep 300' & echo $! > "$1")`},
		{name: "helper killed", script: detach + ` kill -9 $PPID`, want: "supervisor ended without a report"},
		{name: "timeout", script: detach + ` sleep 300`, timeout: 500 * time.Millisecond, want: "timed out"},
		{name: "cancelled", script: detach + ` sleep 300`, cancel: true, want: "cancelled"},
	}
	eachMode(t, func(t *testing.T, r *Runner) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				pidFile := filepath.Join(t.TempDir(), "pid")
				pack := packOf(command("c", "sh", "-c", tt.script, "sh", "{f}"))
				if tt.timeout > 0 {
					pack.Timeout = workspace.Duration(tt.timeout)
				}
				inv, err := r.Prepare(pack, pack.Commands[0], map[string]any{"f": pidFile})
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if tt.cancel {
					go func() {
						readPID(t, pidFile)
						cancel()
					}()
				}
				start := time.Now()
				res, err := r.Run(ctx, inv)
				if err != nil {
					t.Fatal(err)
				}
				took := time.Since(start)
				pid := readPID(t, pidFile)
				left := 0
				if !processGone(pid) {
					left = 1
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
				t.Logf("%s (%s): call ended after %s; killed %d (%d outside the group); processes left: %d; %s", tt.name, r.Contain.Mode(), took.Round(time.Millisecond), res.Killed, res.Detached, left, res.Err)
				if left != 0 {
					t.Fatalf("process %d outlived the call", pid)
				}
				// In session mode an orphan is killed as soon as it is
				// adopted, by no tree's Stop, so it is not counted.
				if r.Contain.Mode() == contain.ModeCgroup && tt.name != "helper killed" && res.Killed < 1 {
					t.Errorf("Killed = %d, want the detached child counted", res.Killed)
				}
				if tt.want == "" && !res.OK() || tt.want != "" && !strings.Contains(res.Err, tt.want) {
					t.Errorf("Err = %q, want %q", res.Err, tt.want)
				}
			})
		}
	})
}

// TestContainStopsTreeWhenGatewayDies: the watcher's pipe reaching end of
// file (the gateway died, even by SIGKILL; here the Manager closes it)
// stops the tree.
func TestContainStopsTreeWhenGatewayDies(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "setsid", "sleep")
	eachMode(t, func(t *testing.T, r *Runner) {
		m := contain.New(contain.Options{Mode: r.Contain.Mode(), Subreaper: os.Getenv(subreaperChildEnv) != ""})
		r.Contain = m
		pidFile := filepath.Join(t.TempDir(), "pid")
		pack := packOf(command("c", "sh", "-c", `setsid sh -c 'trap "" TERM; echo $$ > "$1"; exec sleep 300' sh "$1" & sleep 300`, "sh", "{f}"))
		inv, err := r.Prepare(pack, pack.Commands[0], map[string]any{"f": pidFile})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan *Result, 1)
		go func() {
			res, err := r.Run(context.Background(), inv)
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		pid := readPID(t, pidFile)
		start := time.Now()
		m.Close() // what the kernel does to the gateway's end when it dies
		var res *Result
		select {
		case res = <-done:
		case <-time.After(20 * time.Second):
			t.Fatal("the call did not end after the watcher's pipe closed")
		}
		t.Logf("%s: watcher's pipe closed: tree stopped in %s: %s", r.Contain.Mode(), time.Since(start).Round(time.Millisecond), res.Err)
		if !processGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("detached process %d outlived its gateway", pid)
		}
		if res.OK() {
			t.Errorf("the command ended with %+v, want it killed", res)
		}
	})
}

// TestMaxMemory: the address-space bound is in force before the program
// runs; a command over it fails with a reason naming max_memory, and the
// same command under a larger bound succeeds.
func TestMaxMemory(t *testing.T) {
	t.Parallel()
	requireProgram(t, "jq")
	r := newTestRunner(t, nil)
	pack := packOf(command("grow", "jq", "-n", "[range(3000000)] | length"))
	pack.MaxMemory = 64 << 20
	res := mustRun(t, r, pack, pack.Commands[0], nil)
	t.Logf("jq building a 3e6 array under 64 MiB: ok=%v, peak RSS %d KiB, %s", res.OK(), res.PeakRSS>>10, res.Err)
	if res.OK() || !strings.Contains(res.Err, "max_memory") {
		t.Errorf("over the bound: %+v", res)
	}
	pack.MaxMemory = 1 << 30
	if res := mustRun(t, r, pack, pack.Commands[0], nil); !res.OK() || strings.TrimSpace(string(res.Stdout)) != "3000000" {
		t.Errorf("under the bound: %+v", res)
	}
}

// runBounded runs argv contained with max_memory bytes and returns its
// stdout.
func runBounded(t *testing.T, maxMemory int64, argv ...string) string {
	t.Helper()
	r := newTestRunner(t, nil)
	pack := packOf(command("c", argv...))
	pack.MaxMemory = workspace.ByteSize(maxMemory)
	res := mustRun(t, r, pack, pack.Commands[0], nil)
	if !res.OK() {
		t.Fatalf("%v: %s", argv, res.Err)
	}
	return string(res.Stdout)
}

// TestMaxMemoryBeforeStart: the program starts with its address-space
// bound (soft and hard) already set, by its helper between fork and exec,
// and untraced.
func TestMaxMemoryBeforeStart(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "grep")
	out := runBounded(t, 256<<20, "sh", "-c", `ulimit -S -v; ulimit -H -v; grep TracerPid /proc/self/status`)
	if want := "262144\n262144\nTracerPid:\t0\n"; out != want {
		t.Errorf("the command saw %q, want %q (bound in force, not traced)", out, want)
	}
}

// TestMaxMemorySetuid: a set-user-ID program keeps the bound (limits
// survive exec, and the helper sets it before the exec).
func TestMaxMemorySetuid(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh")
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sh)
	if err != nil {
		t.Fatal(err)
	}
	suid := filepath.Join(t.TempDir(), "suid-sh")
	if err := os.WriteFile(suid, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if out := runBounded(t, 256<<20, suid, "-c", "ulimit -H -v"); out != "262144\n" {
		t.Errorf("the command saw %q, want the bound 262144", out)
	}
}

// TestMaxMemoryCannotBeRaised: the bound is the hard limit too, so the
// command cannot lift it (the attack: raise RLIMIT_AS, then allocate).
func TestMaxMemoryCannotBeRaised(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh")
	if out := runBounded(t, 256<<20, "sh", "-c", `ulimit -S -v unlimited 2>/dev/null || echo refused; ulimit -S -v`); out != "refused\n262144\n" {
		t.Errorf("raising the bound: %q, want it refused", out)
	}
}

// TestProgramCannotRun: a program that exists but cannot be executed (no
// #! line, not an ELF) fails with the exec error its helper reported.
func TestProgramCannotRun(t *testing.T) {
	t.Parallel()
	prog := filepath.Join(t.TempDir(), "notelf")
	if err := os.WriteFile(prog, []byte("\x00\x01 not a program\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, nil)
	pack := packOf(command("c", prog))
	res := mustRun(t, r, pack, pack.Commands[0], nil)
	if res.OK() || !strings.Contains(res.Err, "could not be run") || !strings.Contains(res.Err, "exec format error") {
		t.Errorf("Err = %q, want the exec format error named", res.Err)
	}
}
