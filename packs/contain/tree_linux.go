//go:build linux

package contain

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// Tree is one contained command: its helper (the process the caller
// started and waits for), the command and everything below them.
type Tree struct {
	m   *Manager
	pid int // the helper
	// cgMu guards cgroup, which Release hands back to the Manager for a
	// later tree: from then on this tree must not look at it or kill it.
	cgMu     sync.Mutex
	cgroup   *treeCgroup // its cgroup; nil in session mode
	released bool
	program  string
	report   *os.File
	exit     *Exit
	once     sync.Once
}

// Pid is the helper's process id: the session, and the process group,
// the command starts in.
func (t *Tree) Pid() int { return t.pid }

// member is one running process of a tree.
type member struct{ pid, pgid int }

// members lists the tree's running processes, the helper included. In
// session mode they are its session and what descends from it by parent
// links — zombies pass their descendants on — and, with a subreaper, the
// orphans adopted by this process, all read from one snapshot and the
// orphans killed at once (a command that killed its helper, a double
// fork: whichever tree they came from).
func (t *Tree) members() []member {
	if t.cgroup != nil {
		t.cgMu.Lock()
		defer t.cgMu.Unlock()
		if t.released {
			return nil
		}
		return cgroupMembers(t.cgroup)
	}
	snap := supervisor.Snapshot()
	roots := map[int]bool{t.pid: true}
	for _, p := range snap {
		if p.SID == t.pid {
			roots[p.PID] = true
		}
	}
	ms := liveMembers(snap, roots)
	if t.m.subreaper {
		ms = append(ms, t.m.killOrphansIn(snap)...)
	}
	return ms
}

// remaining lists the tree's running processes. In session mode it
// answers none only when two snapshots in a row found none: one walk of
// /proc is not atomic, and a process whose parent dies while the walk
// reads them both can be missed by it — never by the next, once it has
// been reparented.
func (t *Tree) remaining() []member {
	ms := t.members()
	if len(ms) == 0 && t.cgroup == nil {
		ms = t.members()
	}
	return ms
}

// cgroupMembers reads the processes of cg (cgroup.procs leaves zombies
// out) and their process groups.
func cgroupMembers(cg *treeCgroup) []member {
	pids := cg.pids()
	if len(pids) == 0 {
		return nil
	}
	out := make([]member, 0, len(pids))
	for _, pid := range pids {
		m := member{pid: pid, pgid: pid}
		if st, ok := supervisor.ReadStat(pid); ok {
			m.pgid = st.PGID
		}
		out = append(out, m)
	}
	return out
}

// Stop ends the tree: every process but the helper gets SIGTERM (new ones
// too, as they appear), up to grace passes for the tree to empty — the
// helper reports and exits once the command has — and then everything
// left, the helper included, is killed with SIGKILL. It returns once no
// process of the tree runs (their zombies may wait for a parent to reap
// them); in session mode that is once two walks of /proc in a row found
// none, the orphans this process adopted included (see remaining). A tree
// that is already empty returns after that look.
func (t *Tree) Stop(grace time.Duration) Stopped {
	start := time.Now()
	var st Stopped
	seen := map[int]bool{}
	term := func(ms []member) {
		for _, p := range ms {
			if p.pid == t.pid || seen[p.pid] {
				continue
			}
			seen[p.pid] = true
			st.Killed++
			if p.pgid != t.pid {
				st.Outside++
			}
			_ = syscall.Kill(p.pid, syscall.SIGTERM)
		}
	}
	ms := t.remaining()
	if len(ms) == 0 {
		return st
	}
	term(ms)
	deadline := start.Add(grace)
	for len(ms) > 0 && time.Now().Before(deadline) {
		time.Sleep(pollInterval)
		ms = t.remaining()
		term(ms)
	}
	if len(ms) > 0 {
		st.Forced = true
		giveUp := time.Now().Add(killWait)
		for len(ms) > 0 && time.Now().Before(giveUp) {
			t.kill(ms)
			time.Sleep(pollInterval)
			ms = t.remaining()
		}
		if len(ms) > 0 {
			t.m.opts.Log.Error("processes of a stopped command survived SIGKILL", "pids", fmt.Sprint(ms))
		}
	}
	st.Cleanup = time.Since(start)
	return st
}

// Kill sends SIGKILL to every process of the tree now, without waiting.
func (t *Tree) Kill() {
	t.kill(t.members())
}

func (t *Tree) kill(ms []member) {
	if t.cgroup != nil {
		t.cgMu.Lock()
		defer t.cgMu.Unlock()
		if !t.released {
			t.cgroup.kill()
		}
		return
	}
	for _, p := range ms {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
}

// Exit reads how the command ended from the helper's report. Call it once
// the helper has been reaped (after cmd.Wait); later calls return the
// same.
func (t *Tree) Exit() Exit {
	if t.exit != nil {
		return *t.exit
	}
	var e Exit
	b, _ := io.ReadAll(io.LimitReader(t.report, 16*supervisor.RecordSize))
	for ; len(b) >= supervisor.RecordSize; b = b[supervisor.RecordSize:] {
		tag, v := binary.LittleEndian.Uint32(b[:4]), binary.LittleEndian.Uint32(b[4:8])
		switch tag {
		case supervisor.RecordStatus:
			if e.StartErr == nil {
				e.Reported, e.Status = true, syscall.WaitStatus(v)
			}
		case supervisor.RecordExecFailed:
			e.StartErr = fmt.Errorf("executing %s: %w", t.program, syscall.Errno(v))
		case supervisor.RecordLimitFailed:
			e.StartErr = fmt.Errorf("setting max_memory (RLIMIT_AS): %w", syscall.Errno(v))
		case supervisor.RecordWaitFailed:
			e.StartErr = fmt.Errorf("the helper could not wait for the command: %w", syscall.Errno(v))
		}
	}
	if e.StartErr != nil {
		e.Reported = false
	}
	t.exit = &e
	return e
}

// Release frees what the tree held (its report pipe, its registration,
// its cgroup: kept for a later tree once it is empty, else removed). Call
// it after Stop and once the helper was reaped.
func (t *Tree) Release() {
	t.once.Do(func() {
		t.report.Close()
		if t.cgroup == nil {
			t.m.unregister(t.pid)
			return
		}
		t.cgMu.Lock()
		defer t.cgMu.Unlock()
		t.released = true
		t.m.giveBack(t.cgroup)
	})
}
