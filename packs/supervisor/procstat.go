package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
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

// statBuf is how much of a stat file is read: the fields parsed end well
// before, comm being at most 15 bytes and the fields up to num_threads 20
// numbers.
const statBuf = 1024

// ReadStat reads /proc/<pid>/stat; ok is false when it cannot (the
// process is gone, or /proc is not there).
func ReadStat(pid int) (st Stat, ok bool) {
	return readStat(pid, make([]byte, statBuf))
}

// readStat is ReadStat reading into buf: a containment walk reads every
// process's, with one buffer, parsing in place.
func readStat(pid int, buf []byte) (st Stat, ok bool) {
	fd, err := syscall.Open("/proc/"+strconv.Itoa(pid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return st, false
	}
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil || m <= 0 {
			break
		}
		n += m
	}
	syscall.Close(fd)
	return ParseStat(buf[:n])
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
	var out Stat
	rest := stat[i+1:]
	for k := 0; k <= 17; k++ {
		f := nextField(&rest)
		if f == nil {
			return st, false
		}
		var dst *int
		switch k {
		case 0:
			if len(f) != 1 {
				return st, false
			}
			out.State = f[0]
		case 1:
			dst = &out.PPID
		case 2:
			dst = &out.PGID
		case 3:
			dst = &out.SID
		case 17:
			dst = &out.Threads
		}
		if dst != nil {
			v, ok := atoi(f)
			if !ok {
				return st, false
			}
			*dst = v
		}
	}
	return out, true
}

// nextField cuts the next space-separated field off *b; nil at the end.
func nextField(b *[]byte) []byte {
	s := *b
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\n') {
		s = s[1:]
	}
	if len(s) == 0 {
		*b = s
		return nil
	}
	j := 0
	for j < len(s) && s[j] != ' ' && s[j] != '\n' {
		j++
	}
	*b = s[j:]
	return s[:j]
}

// atoi parses a decimal number, with an optional minus sign (a field such
// as tty_nr or a priority may be negative), without allocating.
func atoi(f []byte) (int, bool) {
	neg := len(f) > 0 && f[0] == '-'
	if neg {
		f = f[1:]
	}
	if len(f) == 0 || len(f) > 18 {
		return 0, false
	}
	v := 0
	for _, c := range f {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
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
	buf := make([]byte, statBuf)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if st, ok := readStat(pid, buf); ok {
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
