package supervisor

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"testing"
)

// statLine is a /proc/<pid>/stat line with the fields that matter set.
func statLine(pid int, comm string, state byte, ppid, pgid, sid, threads int) []byte {
	// state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	// utime stime cutime cstime priority nice num_threads itrealvalue ...
	return []byte(itoa(pid) + " (" + comm + ") " + string(state) + " " + itoa(ppid) + " " + itoa(pgid) + " " + itoa(sid) +
		" 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 " + itoa(threads) + " 0 12345 0")
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestParseStat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		line    []byte
		want    Stat
		ok      bool
		running bool
	}{
		{"sleeping", statLine(10, "sh", 'S', 1, 10, 10, 1), Stat{'S', 1, 10, 10, 1}, true, true},
		{"comm with spaces and parens", statLine(11, "a) (b c", 'R', 10, 10, 10, 3), Stat{'R', 10, 10, 10, 3}, true, true},
		{"zombie", statLine(12, "x", 'Z', 1, 12, 12, 1), Stat{'Z', 1, 12, 12, 1}, true, false},
		// Its leader exited; a thread that forked a child still runs.
		{"zombie leader, threads alive", statLine(13, "go", 'Z', 1, 13, 13, 4), Stat{'Z', 1, 13, 13, 4}, true, true},
		{"dead", statLine(14, "x", 'X', 1, 14, 14, 1), Stat{'X', 1, 14, 14, 1}, true, false},
		{"truncated", []byte("15 (x) S 1 15 15"), Stat{}, false, false},
		{"no comm", []byte("16 x S 1 16 16"), Stat{}, false, false},
		{"not a number", []byte("17 (x) S one 17 17 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0"), Stat{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseStat(tt.line)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("ParseStat(%q) = %+v, %v; want %+v, %v", tt.line, got, ok, tt.want, tt.ok)
			}
			if ok && got.Running() != tt.running {
				t.Errorf("Running() = %v, want %v", got.Running(), tt.running)
			}
		})
	}
}

// TestLiveThroughZombies: what descends from a root by parent links is
// found even where a link is a zombie (the leader of a thread group whose
// forking thread still runs) or a process no longer running.
func TestLiveThroughZombies(t *testing.T) {
	t.Parallel()
	p := func(pid, ppid int, state byte, threads int) Proc {
		return Proc{PID: pid, Stat: Stat{State: state, PPID: ppid, PGID: pid, SID: pid, Threads: threads}}
	}
	snap := []Proc{
		p(100, 1, 'S', 1),   // the root
		p(101, 100, 'Z', 1), // an exited middle process, not yet reaped
		p(102, 101, 'S', 1), // its child, read before it was reparented
		p(103, 102, 'S', 1),
		p(104, 100, 'Z', 2), // a zombie leader whose thread still runs
		p(105, 104, 'R', 1),
		p(200, 1, 'S', 1), // unrelated
		p(201, 200, 'S', 1),
	}
	var got []int
	for _, q := range Live(snap, map[int]bool{100: true}) {
		got = append(got, q.PID)
	}
	slices.Sort(got)
	if want := []int{100, 102, 103, 104, 105}; !slices.Equal(got, want) {
		t.Errorf("Live = %v, want %v", got, want)
	}
	if got := Live(snap, map[int]bool{999: true}); len(got) != 0 {
		t.Errorf("Live from a pid not in the snapshot = %v, want none", got)
	}
}

// TestReadStatMatchesReference: the in-place parser reads every process
// of this machine as a plain field split of its stat file does.
func TestReadStatMatchesReference(t *testing.T) {
	t.Parallel()
	ref := func(b []byte) (Stat, bool) {
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			return Stat{}, false
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 18 || len(f[0]) != 1 {
			return Stat{}, false
		}
		var n [4]int
		for k, at := range [4]int{1, 2, 3, 17} {
			v, err := strconv.Atoi(string(f[at]))
			if err != nil {
				return Stat{}, false
			}
			n[k] = v
		}
		return Stat{f[0][0], n[0], n[1], n[2], n[3]}, true
	}
	checked := 0
	for _, p := range Snapshot() {
		b, err := os.ReadFile("/proc/" + itoa(p.PID) + "/stat")
		if err != nil {
			continue // gone since
		}
		want, ok := ref(b)
		got, gok := ParseStat(b)
		if ok != gok || got != want {
			t.Errorf("pid %d: ParseStat = %+v, %v; reference %+v, %v (%q)", p.PID, got, gok, want, ok, b)
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no process read from /proc")
	}
	self, ok := ReadStat(os.Getpid())
	if !ok || self.PPID != os.Getppid() || self.State == 0 {
		t.Errorf("ReadStat(self) = %+v, %v; want parent %d", self, ok, os.Getppid())
	}
}
