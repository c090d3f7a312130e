package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The bench of the gateway hardening tests: a misbehaving MCP server
// (testdata/hostile) and what /proc says about toolgate and its children.

// hostileBinary is testdata/hostile, built once.
func hostileBinary(t testing.TB) string {
	t.Helper()
	return hostileBuild.binary(t, "hostile", "./testdata/hostile")
}

// startHostileHTTP runs the hostile server over streamable HTTP with flags
// and returns its endpoint URL.
func startHostileHTTP(t testing.TB, flags ...string) string {
	t.Helper()
	return startListening(t, hostileBinary(t), append([]string{"-addr", "127.0.0.1:0"}, flags...)...)
}

// pidDir is where hostile servers started with -pids DIR leave a file
// named after their pid.
type pidDir string

// started lists every pid a server wrote.
func (d pidDir) started() []int {
	entries, _ := os.ReadDir(string(d))
	var out []int
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// alive lists the started servers that still run (zombies excluded).
func (d pidDir) alive() []int {
	var out []int
	for _, pid := range d.started() {
		if procRunning(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// killAll kills what still runs (test cleanup after a failure).
func (d pidDir) killAll() {
	for _, pid := range d.alive() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// newPidDir makes a pidDir whose servers are killed at cleanup.
func newPidDir(t testing.TB) pidDir {
	d := pidDir(t.TempDir())
	t.Cleanup(d.killAll)
	return d
}

// procRunning is true while pid exists and is not a zombie.
func procRunning(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && len(s) > i+2 && s[i+2] != 'Z'
}

// procSample is what /proc says about one process.
type procSample struct {
	rssKiB  int64 // VmRSS
	threads int   // entries of /proc/<pid>/task
	fds     int   // entries of /proc/<pid>/fd
}

func sampleProc(pid int) (procSample, error) {
	var s procSample
	base := filepath.Join("/proc", strconv.Itoa(pid))
	status, err := os.ReadFile(filepath.Join(base, "status"))
	if err != nil {
		return s, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			s.rssKiB, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
		}
	}
	tasks, err := os.ReadDir(filepath.Join(base, "task"))
	if err != nil {
		return s, err
	}
	s.threads = len(tasks)
	fds, err := os.ReadDir(filepath.Join(base, "fd"))
	if err != nil {
		return s, err
	}
	s.fds = len(fds)
	return s, nil
}

// descendants lists every live process below pid (children, theirs, …).
func descendants(pid int) []int {
	parent := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		var state string
		var ppid int
		if i < 0 {
			continue
		}
		if _, err := fmt.Sscanf(s[i+1:], " %s %d", &state, &ppid); err == nil && state != "Z" {
			parent[ppid] = append(parent[ppid], child)
		}
	}
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range parent[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// treeRSSKiB is the summed VmRSS of pid and all its descendants.
func treeRSSKiB(pid int) int64 {
	var sum int64
	for _, p := range append([]int{pid}, descendants(pid)...) {
		if s, err := sampleProc(p); err == nil {
			sum += s.rssKiB
		}
	}
	return sum
}

// stopDaemon sends SIGTERM and waits for the process to exit, returning
// how long that took (it fails the test past within).
func stopDaemon(t testing.TB, d *daemon, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := d.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(within):
		_ = d.cmd.Process.Kill()
		<-done
		t.Fatalf("toolgate did not exit within %s of SIGTERM", within)
	}
	return time.Since(start)
}
