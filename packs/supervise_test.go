//go:build linux

package packs

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
	"github.com/toolgate/toolgate/workspace"
)

// pidExists is true while pid exists at all, zombie or not: the supervisor
// reaps what it kills, so nothing of a stopped tree may remain.
func pidExists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// TestSupervisorStopsDetachedChildren: a child that calls setsid (or is
// double-forked) leaves the process group, so a group kill misses it; the
// supervisor, its subreaper, stops it whenever the call ends.
func TestSupervisorStopsDetachedChildren(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "setsid", "sleep")
	// detach starts a process that left the group and ignores SIGTERM,
	// writing its pid to $1.
	const detach = `setsid sh -c 'trap "" TERM; echo $$ > "$1"; while :; do sleep 1; done' sh "$1" &`
	tests := []struct {
		name    string
		script  string
		timeout time.Duration
		cancel  bool
		want    string // in Result.Err; "" for success
	}{
		{name: "command exits", script: detach + ` sleep 0.2; exit 0`},
		{name: "double fork", script: `(sh -c 'trap "" TERM; echo $$ > "$1"; exec sleep 300' sh "$1" &) ; sleep 0.2`},
		{name: "timeout", script: detach + ` sleep 300`, timeout: 500 * time.Millisecond, want: "timed out"},
		{name: "cancelled", script: detach + ` sleep 300`, cancel: true, want: "cancelled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newTestRunner(t, nil)
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
			if pidExists(pid) {
				left = 1
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Logf("%s: call ended after %s; killed %d (%d outside the group); processes left: %d", tt.name, took.Round(time.Millisecond), res.Killed, res.Detached, left)
			if left != 0 {
				t.Fatalf("process %d outlived the call", pid)
			}
			if res.Killed < 1 {
				t.Errorf("Killed = %d, want the detached child counted", res.Killed)
			}
			if tt.name != "double fork" && res.Detached < 1 {
				t.Errorf("Detached = %d, want the setsid child counted", res.Detached)
			}
			if tt.want == "" && !res.OK() || tt.want != "" && !strings.Contains(res.Err, tt.want) {
				t.Errorf("Err = %q, want %q", res.Err, tt.want)
			}
		})
	}
}

// TestSupervisorStopsTreeWhenGatewayDies: the supervisor's control pipe
// reaching end of file (the gateway died, even by SIGKILL) stops the tree.
func TestSupervisorStopsTreeWhenGatewayDies(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "setsid", "sleep")
	r := newTestRunner(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	pack := packOf(command("c", "sh", "-c", `setsid sh -c 'trap "" TERM; echo $$ > "$1"; exec sleep 300' sh "$1" & sleep 300`, "sh", "{f}"))
	inv, err := r.Prepare(pack, pack.Commands[0], map[string]any{"f": pidFile})
	if err != nil {
		t.Fatal(err)
	}
	path, err := lookPathIn(inv.Argv[0], envValue(inv.Env, "PATH"), inv.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.start(path, inv)
	if err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, pidFile)
	start := time.Now()
	p.ctl.Close() // what the kernel does to the gateway's descriptors when it dies
	select {
	case <-p.leaderDone:
	case <-time.After(10 * time.Second):
		t.Fatal("the supervisor did not end after its control pipe closed")
	}
	p.stop(time.Second)
	p.stdout.Close()
	p.stderr.Close()
	rep := p.exit()
	t.Logf("control pipe closed: tree stopped in %s; killed %d (%d outside the group)", time.Since(start).Round(time.Millisecond), rep.killed, rep.outside)
	if pidExists(pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("detached process %d outlived its supervisor", pid)
	}
	if rep.signal == 0 {
		t.Errorf("the command ended with %+v, want it killed", rep)
	}
}

// TestMaxMemory: the address-space bound is in force before the program
// runs; a command over it fails with a reason naming max_memory, and the
// same command under a larger bound succeeds.
func TestMaxMemory(t *testing.T) {
	t.Parallel()
	requireProgram(t, "jq")
	for _, supervised := range []bool{true, false} {
		r := directRunner(t, nil)
		if supervised {
			r = newTestRunner(t, nil)
		}
		pack := packOf(command("grow", "jq", "-n", "[range(3000000)] | length"))
		pack.MaxMemory = 64 << 20
		res := mustRun(t, r, pack, pack.Commands[0], nil)
		t.Logf("supervised=%v: jq building a 3e6 array under 64 MiB: ok=%v, peak RSS %d KiB, %s", supervised, res.OK(), res.PeakRSS>>10, res.Err)
		if res.OK() || !strings.Contains(res.Err, "max_memory") {
			t.Errorf("supervised=%v: over the bound: %+v", supervised, res)
		}
		pack.MaxMemory = 1 << 30
		if res := mustRun(t, r, pack, pack.Commands[0], nil); !res.OK() || strings.TrimSpace(string(res.Stdout)) != "3000000" {
			t.Errorf("supervised=%v: under the bound: %+v", supervised, res)
		}
	}
}

// TestSupervisorKilled: a supervisor that dies without reporting (here
// SIGKILL) leaves its process group to the gateway, which stops it.
func TestSupervisorKilled(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "sleep")
	r := newTestRunner(t, nil)
	pidFile := filepath.Join(t.TempDir(), "pid")
	pack := packOf(command("c", "sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", "{f}"))
	inv, err := r.Prepare(pack, pack.Commands[0], map[string]any{"f": pidFile})
	if err != nil {
		t.Fatal(err)
	}
	path, err := lookPathIn(inv.Argv[0], envValue(inv.Env, "PATH"), inv.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.start(path, inv)
	if err != nil {
		t.Fatal(err)
	}
	pid := readPID(t, pidFile)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.leaderDone
	p.stop(200 * time.Millisecond)
	p.stdout.Close()
	p.stderr.Close()
	ex := p.exit()
	waitFor(t, 5*time.Second, "the group member outlived its killed supervisor", func() bool { return processGone(pid) })
	if !strings.Contains(ex.supervisorErr, "without a report") {
		t.Errorf("exit %+v, want the missing report named", ex)
	}
}

// runSupervised runs argv under the supervisor with max_memory bytes and
// returns its stdout and the supervisor's report.
func runSupervised(t *testing.T, maxMemory int64, argv ...string) (string, *supervisor.Report) {
	t.Helper()
	r := newTestRunner(t, nil)
	pack := packOf(command("c", argv...))
	pack.MaxMemory = workspace.ByteSize(maxMemory)
	inv, err := r.Prepare(pack, pack.Commands[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	path, err := lookPathIn(inv.Argv[0], envValue(inv.Env, "PATH"), inv.Dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.start(path, inv)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(p.stdout)
	<-p.leaderDone
	p.stop(200 * time.Millisecond)
	p.stdout.Close()
	p.stderr.Close()
	if ex := p.exit(); ex.code != 0 || p.rep == nil {
		t.Fatalf("%v: exit %+v, report %+v (%v)", argv, ex, p.rep, p.repErr)
	}
	return string(out), p.rep
}

// TestMaxMemoryTraced: a plain program is started traced, gets its
// address-space bound (soft and hard) before it runs, and runs untraced;
// the report says the shim was not needed.
func TestMaxMemoryTraced(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh", "grep")
	out, rep := runSupervised(t, 256<<20, "sh", "-c", `ulimit -S -v; ulimit -H -v; grep TracerPid /proc/self/status`)
	if want := "262144\n262144\nTracerPid:\t0\n"; out != want {
		t.Errorf("the command saw %q, want %q (bound in force, not traced)", out, want)
	}
	if rep.Limit != supervisor.LimitTraced {
		t.Errorf("limit put in force by %q, want %q (is ptrace refused here?)", rep.Limit, supervisor.LimitTraced)
	}
}

// TestMaxMemorySetuidUsesShim: a set-user-ID program is not traced (that
// would drop its privileges): the shim bounds it, as before.
func TestMaxMemorySetuidUsesShim(t *testing.T) {
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
	out, rep := runSupervised(t, 256<<20, suid, "-c", "ulimit -H -v")
	if out != "262144\n" {
		t.Errorf("the command saw %q, want the bound 262144", out)
	}
	if rep.Limit != supervisor.LimitShim {
		t.Errorf("limit put in force by %q, want %q for a set-user-ID program", rep.Limit, supervisor.LimitShim)
	}
}

// TestMaxMemoryCannotBeRaised: the bound is the hard limit too, so the
// command cannot lift it (the attack: raise RLIMIT_AS, then allocate).
func TestMaxMemoryCannotBeRaised(t *testing.T) {
	t.Parallel()
	requireProgram(t, "sh")
	out, _ := runSupervised(t, 256<<20, "sh", "-c", `ulimit -S -v unlimited 2>/dev/null || echo refused; ulimit -S -v`)
	if out != "refused\n262144\n" {
		t.Errorf("raising the bound: %q, want it refused", out)
	}
}
