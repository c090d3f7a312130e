package packs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// groupPollInterval is how often a stopping process group is checked for
// survivors while it has its grace period.
const groupPollInterval = 10 * time.Millisecond

// stopGroup makes sure nothing of process group pgid outlives the run. If
// the leader has exited and the group is empty, nothing happens. Otherwise
// the group gets SIGTERM, then up to grace to exit, then SIGKILL. It returns
// once the leader has been reaped. Processes that left the group (setsid)
// are beyond its reach; confining those takes a container or cgroup.
func stopGroup(pgid int, proc *os.Process, leaderDone <-chan struct{}, grace time.Duration) {
	select {
	case <-leaderDone:
		if !groupAlive(pgid) {
			return
		}
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	expired := false
	select {
	case <-leaderDone:
	case <-deadline.C:
		expired = true
	}
	if !expired {
		// The leader is reaped, so the group is empty once every member
		// has exited; give them the rest of the grace period.
		tick := time.NewTicker(groupPollInterval)
		defer tick.Stop()
		for !expired && groupAlive(pgid) {
			select {
			case <-tick.C:
			case <-deadline.C:
				expired = true
			}
		}
	}
	if expired {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = proc.Kill()
	}
	<-leaderDone
}

// groupAlive reports whether any process is still running in group pgid.
// Zombies do not count: an orphan that has exited waits for init to reap
// it, and some container inits reap slowly. Where /proc cannot tell, any
// member counts.
func groupAlive(pgid int) bool {
	if err := syscall.Kill(-pgid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	running, known := runningMembers(pgid)
	return running || !known
}

// runningMembers scans /proc for a process of group pgid that is not a
// zombie. known is false when /proc is unavailable.
func runningMembers(pgid int) (running, known bool) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return false, false
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, _, g, ok := supervisor.ProcStat(n)
		if ok && state != 'Z' && state != 'X' && g == pgid {
			return true, true
		}
	}
	return false, true
}

// lookPathIn finds program the way execvp would, but in the PATH the
// command will run with rather than the gateway's own. A program path with
// a slash is taken as written (relative to dir, as exec will run it).
// Relative PATH entries are skipped so that the working directory never
// supplies a program found by name.
func lookPathIn(program, pathList, dir string) (string, error) {
	if strings.Contains(program, "/") {
		check := program
		if !filepath.IsAbs(program) && dir != "" {
			check = filepath.Join(dir, program)
		}
		if err := executable(check); err != nil {
			return "", err
		}
		return program, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, program)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q not found on PATH (%s); install it or add its directory to PATH", program, pathList)
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%q: %w", path, err)
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%q is not an executable file", path)
	}
	return nil
}

// envValue returns the value of key in a KEY=VALUE list.
func envValue(env []string, key string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			return v
		}
	}
	return ""
}
