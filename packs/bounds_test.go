package packs

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/workspace"
)

// TestTimeoutKillsProcessGroup runs a shell that ignores SIGTERM and whose
// background child ignores it too: the timeout must still leave no process
// behind, via SIGKILL to the whole group after the grace period.
func TestTimeoutKillsProcessGroup(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	dir := t.TempDir()
	c := command("stubborn", "sh", "-c", "trap '' TERM; sleep 300 & echo $! > pidfile; wait")
	c.Cwd = dir
	p := packOf(c)
	p.Timeout = 500_000_000 // 500ms
	res := mustRun(t, r, p, c, nil)
	if !res.TimedOut || res.ExitCode != -1 || !strings.Contains(res.Err, "timed out after 500ms") {
		t.Errorf("timed out %v exit %d err %q", res.TimedOut, res.ExitCode, res.Err)
	}
	if res.Duration > 5*time.Second {
		t.Errorf("run took %v; the group should be killed 200ms after the 500ms timeout", res.Duration)
	}
	pid := readPID(t, filepath.Join(dir, "pidfile"))
	waitFor(t, 5*time.Second, "the background sleep survived the timeout", func() bool { return processGone(pid) })
}

// TestLeaderExitStopsLeftovers: a command that exits while a child it
// started keeps running returns promptly, and the child does not outlive it.
func TestLeaderExitStopsLeftovers(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	r.KillGrace = 5 * time.Second
	dir := t.TempDir()
	c := command("leaves-child", "sh", "-c", "sleep 300 & echo $! > pidfile; echo started")
	c.Cwd = dir
	res := mustRun(t, r, packOf(c), c, nil)
	if res.Err != "" || string(res.Stdout) != "started\n" {
		t.Errorf("err %q stdout %q", res.Err, res.Stdout)
	}
	if res.Duration > 2*time.Second {
		t.Errorf("run took %v; it should end when the command does, and SIGTERM should stop the child without waiting out the 5s grace", res.Duration)
	}
	pid := readPID(t, filepath.Join(dir, "pidfile"))
	waitFor(t, 5*time.Second, "the background sleep outlived its command", func() bool { return processGone(pid) })
}

func TestContextCancelStopsGroup(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	c := command("sleep", "sleep", "300")
	inv, err := r.Prepare(packOf(c), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res, err := r.Run(ctx, inv)
	if err != nil {
		t.Fatal(err)
	}
	if res.TimedOut || !strings.Contains(res.Err, "cancelled (context deadline exceeded)") || res.Duration > 5*time.Second {
		t.Errorf("timed out %v err %q after %v", res.TimedOut, res.Err, res.Duration)
	}
}

func TestOutputCap(t *testing.T) {
	t.Parallel()
	r := newTestRunner(t, nil)
	c := command("yes", "yes", "{word}")
	p := packOf(c)
	p.MaxOutput = 64 << 10
	res := mustRun(t, r, p, c, map[string]any{"word": "y"})
	if !res.Truncated || len(res.Stdout) != 64<<10 || res.CutBytes <= 0 {
		t.Fatalf("truncated %v, %d bytes kept, %d cut", res.Truncated, len(res.Stdout), res.CutBytes)
	}
	if res.OutputBytes != int64(len(res.Stdout))+res.CutBytes {
		t.Errorf("OutputBytes %d != kept %d + cut %d", res.OutputBytes, len(res.Stdout), res.CutBytes)
	}
	if !strings.Contains(res.Err, "output passed max_output (65536 bytes)") || !strings.HasPrefix(string(res.Stdout), "y\ny\n") {
		t.Errorf("err %q", res.Err)
	}
}

// TestOutputMemoryBounded pushes 1 GB through each pipe and checks the
// runner's allocations stay small: on stdout the run stops at the cap, on
// stderr it runs to the end keeping only a tail. Not parallel, so the
// allocation figures are this test's own.
func TestOutputMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("pushes 1 GB through a pipe")
	}
	const gig = "1000000000"
	tests := []struct {
		name     string
		argv     []string
		within   time.Duration
		stdout   int
		stderrIn int64
	}{
		{"stdout stops at the cap", []string{"head", "-c", gig, "/dev/zero"}, 10 * time.Second, int(DefaultMaxOutput), 0},
		{"stderr keeps a tail", []string{"sh", "-c", "head -c " + gig + " /dev/zero >&2"}, 2 * time.Minute, 0, 1e9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRunner(t, nil)
			r.DefaultTimeout = tt.within
			c := command("big", tt.argv...)
			inv, err := r.Prepare(packOf(c), c, nil)
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := r.Run(context.Background(), inv)
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%s: %v, allocated %.1f MiB in total, kept %d stdout bytes, cut %d, stderr tail %d bytes",
				tt.name, res.Duration, float64(allocated)/(1<<20), len(res.Stdout), res.CutBytes, len(res.StderrTail))
			if res.TimedOut {
				t.Fatalf("did not finish within %v", tt.within)
			}
			if len(res.Stdout) != tt.stdout || len(res.StderrTail) > StderrTailBytes {
				t.Errorf("kept %d stdout bytes (want %d) and %d stderr bytes (at most %d)", len(res.Stdout), tt.stdout, len(res.StderrTail), StderrTailBytes)
			}
			if tt.stdout > 0 && !res.Truncated {
				t.Errorf("stdout over the cap not reported as truncated")
			}
			// Unbounded capture would allocate about 1 GB; a loaded machine
			// reads a few MiB past the cap before the group dies.
			if limit := uint64(64 << 20); allocated > limit {
				t.Errorf("allocated %d bytes while 1 GB was printed; want under %d", allocated, limit)
			}
		})
	}
}

// BenchmarkRun measures one full call (argv, clean environment, process
// group, pipes, cleanup): with `true` it is the runner's own overhead; with
// the bundled jq query it is a typical real call.
func BenchmarkRun(b *testing.B) {
	r := NewRunner(nil, func(k string) string {
		if k == "PATH" {
			return "/usr/local/bin:/usr/bin:/bin"
		}
		return ""
	})
	ws, err := workspace.Load("testdata/jq-workspace.yaml")
	if err != nil {
		b.Fatal(err)
	}
	jq := ws.CommandPacks[0]
	tr := command("true", "true")
	cases := []struct {
		name string
		pack *workspace.CommandPack
		cmd  *workspace.Command
		args map[string]any
	}{
		{"true", packOf(tr), tr, nil},
		{"jq query", jq, jq.Commands[0], map[string]any{"filter": ".name", "file": "testdata/sample.json"}},
	}
	// Each command runs contained as the gateway runs it, in either mode
	// (package contain); BenchmarkPackCall compares with a bare exec.
	for _, mode := range []contain.Mode{contain.ModeCgroup, contain.ModeSession} {
		r.Contain = contain.New(contain.Options{Mode: mode})
		defer r.Contain.Close()
		for _, bc := range cases {
			b.Run(string(mode)+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				before := childCPU()
				defer func() { b.ReportMetric(float64(childCPU()-before)/float64(b.N), "child-cpu-ns/op") }()
				for b.Loop() {
					inv, err := r.Prepare(bc.pack, bc.cmd, bc.args)
					if err != nil {
						b.Fatal(err)
					}
					if res, err := r.Run(context.Background(), inv); err != nil || res.Err != "" {
						b.Fatal(err, res.Err)
					}
				}
			})
		}
	}
}

// childCPU is the user+system CPU time of every reaped child so far: the
// commands and their helpers (steadier than wall time on a shared
// machine).
func childCPU() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
