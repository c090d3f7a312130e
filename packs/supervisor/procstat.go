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
}

// Running reports whether the process still runs: neither a zombie nor
// dead.
func (s Stat) Running() bool { return s.State != 'Z' && s.State != 'X' }

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
	f := bytes.Fields(stat[i+1:])
	if len(f) < 4 || len(f[0]) != 1 {
		return st, false
	}
	var n [3]int
	for k := range n {
		v, err := strconv.Atoi(string(f[1+k]))
		if err != nil {
			return st, false
		}
		n[k] = v
	}
	return Stat{State: f[0][0], PPID: n[0], PGID: n[1], SID: n[2]}, true
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

// Below returns the processes of snap that descend from any of roots
// (by parent links), roots themselves left out.
func Below(snap []Proc, roots map[int]bool) []Proc {
	children := map[int][]Proc{}
	for _, p := range snap {
		children[p.PPID] = append(children[p.PPID], p)
	}
	var out []Proc
	queue := make([]int, 0, len(roots))
	for r := range roots {
		queue = append(queue, r)
	}
	seen := map[int]bool{}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			if !seen[c.PID] && !roots[c.PID] {
				seen[c.PID] = true
				out = append(out, c)
				queue = append(queue, c.PID)
			}
		}
	}
	return out
}
