package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of utime/stime in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux this runs on).
const clockTick = 10 * time.Millisecond

// cpuTimes is a process's CPU time: its own (every thread) and that of
// its waited-for children.
type cpuTimes struct {
	self, children time.Duration
}

// readCPU reads pid's CPU times; an error means the process is gone. Its
// own time is the sum of its threads' /proc/<pid>/task/*/schedstat
// run time (nanoseconds): /proc/<pid>/stat's utime+stime count 10 ms
// ticks, too coarse once a phase's CPU is spread over 16 server
// processes. Children's time (cutime+cstime) is from /proc/<pid>/stat.
func readCPU(pid int) (cpuTimes, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpuTimes{}, err
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return cpuTimes{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); cutime and cstime are fields 16 and 17.
	if len(f) < 15 {
		return cpuTimes{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var t [2]int64
	for k := range t {
		if t[k], err = strconv.ParseInt(f[13+k], 10, 64); err != nil {
			return cpuTimes{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return cpuTimes{}, fmt.Errorf("/proc/%d/task: no threads", pid)
	}
	var self int64
	for _, task := range tasks {
		sb, err := os.ReadFile(task)
		if err != nil {
			continue // a thread that just ended
		}
		ns, err := strconv.ParseInt(strings.Fields(string(sb))[0], 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("%s: %w", task, err)
		}
		self += ns
	}
	return cpuTimes{self: time.Duration(self), children: time.Duration(t[0]+t[1]) * clockTick}, nil
}

// mustCPU is readCPU for a process that must be alive (0 for pid 0).
func mustCPU(pid int) cpuTimes {
	if pid == 0 {
		return cpuTimes{}
	}
	t, err := readCPU(pid)
	if err != nil {
		fatalf("read CPU of pid %d: %v", pid, err)
	}
	return t
}

// rssKB is pid's resident set (VmRSS) in KiB.
func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		fatalf("read RSS of pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				fatalf("parse VmRSS of pid %d: %v", pid, err)
			}
			return n
		}
	}
	fatalf("no VmRSS for pid %d", pid)
	return 0
}

// findDescendants returns the pids of the descendants of root whose
// command line contains marker, polling until deadline for at least one
// (the process may still be starting).
func findDescendants(root int, marker string, deadline time.Time) ([]int, error) {
	for {
		var found []int
		for _, pid := range descendants(root) {
			cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if err == nil && bytes.Contains(cmdline, []byte(marker)) {
				found = append(found, pid)
			}
		}
		if len(found) > 0 {
			return found, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no process under pid %d runs %q", root, marker)
		}
		time.Sleep(20 * time.Millisecond) // polling a process table, not synchronising goroutines
	}
}

// descendants lists every process below root, from each process's ppid.
func descendants(root int) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	parent := map[int]int{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		ppid, _ := strconv.Atoi(f[1])
		parent[pid] = ppid
	}
	var out []int
	for pid := range parent {
		for p := parent[pid]; p != 0; p = parent[p] {
			if p == root {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}
