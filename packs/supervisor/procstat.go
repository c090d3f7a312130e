package supervisor

import (
	"bytes"
	"os"
	"strconv"
)

// ProcStat reads state, parent and process group of pid from
// /proc/<pid>/stat; ok is false when it cannot.
func ProcStat(pid int) (state byte, ppid, pgid int, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, 0, false
	}
	// After "pid (comm) " come: state ppid pgrp ...; comm may hold spaces
	// and parentheses, so parse from the last ')'.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, 0, false
	}
	// bytes, not strings: see the package doc on what this package imports.
	f := bytes.Fields(stat[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, 0, false
	}
	pp, err1 := strconv.Atoi(string(f[1]))
	pg, err2 := strconv.Atoi(string(f[2]))
	if err1 != nil || err2 != nil {
		return 0, 0, 0, false
	}
	return f[0][0], pp, pg, true
}
