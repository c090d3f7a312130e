//go:build linux

package contain

import (
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// orphanScanInterval is how often, while trees run in session mode with a
// subreaper, the children of this process are looked at for orphans
// adopted from them: a process whose parent died (killed, or exited after
// a double fork) is given to the nearest subreaper without a signal, so
// only looking finds it.
const orphanScanInterval = 20 * time.Millisecond

// scanOrphans kills adopted orphans while any tree runs (and until every
// orphan is reaped).
func (m *Manager) scanOrphans() {
	tick := time.NewTicker(orphanScanInterval)
	defer tick.Stop()
	for {
		m.killOrphans()
		m.mu.Lock()
		if len(m.sessions) == 0 && len(m.orphans) == 0 {
			m.scanning = false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
		<-tick.C
	}
}

// killOrphans kills the orphans of a fresh /proc snapshot (see
// killOrphansIn).
func (m *Manager) killOrphans() []member {
	return m.killOrphansIn(supervisor.Snapshot())
}

// killOrphansIn kills, with everything below them, the children of this
// process in snap that it did not start: processes in another session
// than its own (every tree starts in a session of its own, and no process
// can join an existing session) that are neither a running tree's helper
// nor the watcher. It then reaps those that have exited. Processes this
// process started through os/exec outside the Manager stay in its session
// and are never touched, so their reaping is never raced. It returns the
// running processes it signalled.
func (m *Manager) killOrphansIn(snap []supervisor.Proc) []member {
	m.mu.Lock()
	roots := map[int]bool{}
	for _, p := range snap {
		if p.PPID != m.self || p.SID == m.selfSID || m.sessions[p.PID] || m.watch.is(p.PID) {
			continue
		}
		// A zombie too: what its last threads forked is still below it.
		m.orphans[p.PID] = true
		roots[p.PID] = true
	}
	m.mu.Unlock()
	killed := liveMembers(snap, roots)
	for _, p := range killed {
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for pid := range m.orphans {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || err == syscall.ECHILD {
			delete(m.orphans, pid)
		}
	}
	return killed
}

// liveMembers lists the running processes of snap among roots and below
// them.
func liveMembers(snap []supervisor.Proc, roots map[int]bool) []member {
	live := supervisor.Live(snap, roots)
	out := make([]member, len(live))
	for i, p := range live {
		out[i] = member{p.PID, p.PGID}
	}
	return out
}
