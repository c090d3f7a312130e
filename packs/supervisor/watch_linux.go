//go:build linux

package supervisor

import (
	"bufio"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// WatchArgs is the watcher's command line after argv[0]: "-cgroup DIR"
// when the gateway contains its commands in cgroups below DIR, nothing
// when it contains them by session. On its standard input the gateway
// writes "+SID" when a session starts and "-SID" when it ended.
func WatchArgs(cgroupDir string) []string {
	if cgroupDir == "" {
		return nil
	}
	return []string{"-cgroup", cgroupDir}
}

// watchMain waits for its standard input to end, then kills what the
// gateway contained and removes its cgroups. It ignores the signals a
// terminal or a service manager sends a process group: only the end of
// the gateway ends it.
func watchMain(args []string) int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGPIPE)
	var dir string
	if len(args) == 2 && args[0] == "-cgroup" {
		dir = args[1]
	}
	sessions := map[int]bool{}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if len(line) < 2 {
			continue
		}
		sid, err := strconv.Atoi(line[1:])
		if err != nil || sid <= 1 {
			continue
		}
		switch line[0] {
		case '+':
			sessions[sid] = true
		case '-':
			delete(sessions, sid)
		}
	}
	if dir != "" {
		KillCgroupTree(dir, 10*time.Second)
	}
	KillSessions(sessions, 100)
	return 0
}

// KillSessions kills, with SIGKILL, every process of the sessions named
// and everything below them, walking /proc again until two walks in a row
// find none (one walk is not atomic: a process whose parent dies while it
// is read can be missed once) or rounds walks were made. It returns how
// many processes it signalled.
func KillSessions(sessions map[int]bool, rounds int) int {
	if len(sessions) == 0 {
		return 0
	}
	killed, empty := 0, 0
	for range rounds {
		snap := Snapshot()
		roots := map[int]bool{}
		for _, p := range snap {
			if sessions[p.SID] {
				roots[p.PID] = true
			}
		}
		live := Live(snap, roots)
		if len(live) == 0 {
			if empty++; empty == 2 {
				return killed
			}
			continue
		}
		empty = 0
		for _, p := range live {
			if syscall.Kill(p.PID, syscall.SIGKILL) == nil {
				killed++
			}
		}
		time.Sleep(time.Millisecond)
	}
	return killed
}

// KillCgroupTree kills every process in the cgroup v2 directory dir and
// the cgroups below it (cgroup.kill), waits up to within for it to empty,
// and removes the directories, deepest first.
func KillCgroupTree(dir string, within time.Duration) {
	_ = os.WriteFile(dir+"/cgroup.kill", []byte("1"), 0)
	deadline := time.Now().Add(within)
	for Populated(dir) && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	RemoveCgroupTree(dir)
}

// Populated reports whether cgroup v2 directory dir or one below it holds
// a process; an unreadable cgroup.events counts as empty.
func Populated(dir string) bool {
	b, err := os.ReadFile(dir + "/cgroup.events")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "populated "); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return false
}

// RemoveCgroupTree removes cgroup directory dir and those below it,
// deepest first (a cgroup is removed with rmdir, its files go with it).
func RemoveCgroupTree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			RemoveCgroupTree(dir + "/" + e.Name())
		}
	}
	_ = syscall.Rmdir(dir)
}
