package supervisor

import (
	"bytes"
	"os"
	"strconv"
)

// Stat is what /proc/<pid>/stat says of a process's place in the tree.
type Stat struct {
	// State is the one-letter state (R, S, D, Z, T, …).
	State byte
	// PPID, PGID and SID are its parent, process group and session.
	PPID, PGID, SID int
	// Threads is the process's thread count (num_threads); a zombie
	// thread-group leader counts itself until it is reaped.
	Threads int
}

// Running reports whether the process still runs: it is neither dead nor
// a zombie whose threads are all gone. A multi-threaded process's leader
// shows 'Z' as soon as it exits while its other threads may still run
// (and write, and be the parent of what they forked): it runs until the
// last of them is gone.
func (s Stat) Running() bool {
	return s.State != 'X' && (s.State != 'Z' || s.Threads > 1)
}

// ReadStat reads /proc/<pid>/stat; ok is false when it cannot (the
// process is gone, or /proc is not there).
func ReadStat(pid int) (st Stat, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return st, false
	}
	return ParseStat(b)
}

// ParseStat parses the text of a /proc/<pid>/stat file.
func ParseStat(stat []byte) (st Stat, ok bool) {
	// After "pid (comm) " come: state ppid pgrp session ...; comm may hold
	// spaces and parentheses, so parse from the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return st, false
	}
	// num_threads is field 20 of the file, the 18th after comm.
	f := bytes.Fields(stat[i+1:])
	if len(f) < 18 || len(f[0]) != 1 {
		return st, false
	}
	var n [4]int
	for k, at := range [4]int{1, 2, 3, 17} {
		v, err := strconv.Atoi(string(f[at]))
		if err != nil {
			return st, false
		}
		n[k] = v
	}
	return Stat{State: f[0][0], PPID: n[0], PGID: n[1], SID: n[2], Threads: n[3]}, true
}

// Proc is one process of a /proc snapshot.
type Proc struct {
	PID int
	Stat
}

// Snapshot lists every process under /proc, zombies included (see
// Running).
func Snapshot() []Proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	d.Close()
	out := make([]Proc, 0, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := ReadStat(pid); ok {
			out = append(out, Proc{PID: pid, Stat: st})
		}
	}
	return out
}

// Live returns the running processes of snap that are roots or descend
// from one by parent links. A process that is not running still passes
// its descendants on: the zombie leader of a thread group is, until its
// last thread exits, the parent of what that thread forked, and a parent
// read from /proc a moment after its child may have died since.
func Live(snap []Proc, roots map[int]bool) []Proc {
	children := map[int][]int{}
	byPID := make(map[int]Proc, len(snap))
	for _, p := range snap {
		children[p.PPID] = append(children[p.PPID], p.PID)
		byPID[p.PID] = p
	}
	var out []Proc
	queue := make([]int, 0, len(roots))
	seen := make(map[int]bool, len(roots))
	for r := range roots {
		queue = append(queue, r)
		seen[r] = true
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if p, ok := byPID[pid]; ok && p.Running() {
			out = append(out, p)
		}
		for _, c := range children[pid] {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return out
}
