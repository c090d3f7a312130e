//go:build linux

package packs

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
