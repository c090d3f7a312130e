//go:build linux

package contain

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxIdleCgroups bounds how many emptied cgroups a Manager keeps for the
// next trees.
const maxIdleCgroups = 8

// treeCgroup is one tree's cgroup v2 directory with the descriptors the
// tree uses while it runs, opened once: the directory (for
// CLONE_INTO_CGROUP), its cgroup.procs (who is in it) and its
// cgroup.events (whether anything, exiting processes included, still
// is). An emptied cgroup goes back to its Manager and serves the next
// tree, so a call pays neither a mkdir nor an rmdir nor the opens.
type treeCgroup struct {
	dir           string
	fd            int
	procs, events *os.File
	// killed is set once cgroup.kill was written: such a cgroup is never
	// used again, since the kernel (6.x, its kill sequence) kills every
	// process later cloned into it.
	killed bool
}

// takeCgroup returns an idle empty cgroup, or makes one.
func (m *Manager) takeCgroup() (*treeCgroup, error) {
	m.mu.Lock()
	if n := len(m.idle); n > 0 {
		cg := m.idle[n-1]
		m.idle = m.idle[:n-1]
		m.mu.Unlock()
		return cg, nil
	}
	m.mu.Unlock()
	dir := m.cgroup + "/c" + strconv.FormatUint(m.seq.Add(1), 10)
	fd, err := openCgroup(dir)
	if err != nil {
		return nil, err
	}
	cg := &treeCgroup{dir: dir, fd: fd}
	if cg.procs, err = os.Open(dir + "/cgroup.procs"); err == nil {
		cg.events, err = os.Open(dir + "/cgroup.events")
	}
	if err != nil {
		cg.remove()
		return nil, fmt.Errorf("opening the command's cgroup: %w", err)
	}
	return cg, nil
}

// giveBack keeps cg for a later tree when it is empty — no process in it,
// not even an exiting one (cgroup.events says "populated 0") —, was never
// killed, and there is room; it removes it otherwise.
func (m *Manager) giveBack(cg *treeCgroup) {
	if cg.killed || cg.populated() {
		cg.remove()
		return
	}
	m.mu.Lock()
	if !m.closed && len(m.idle) < maxIdleCgroups {
		m.idle = append(m.idle, cg)
		m.mu.Unlock()
		return
	}
	m.mu.Unlock()
	cg.remove()
}

// closeIdle removes the idle cgroups (the Manager is closing).
func (m *Manager) closeIdle() {
	m.mu.Lock()
	idle := m.idle
	m.idle = nil
	m.mu.Unlock()
	for _, cg := range idle {
		cg.remove()
	}
}

// readFromStart reads the whole of f from its start (a cgroup file is
// generated afresh on each read from offset 0).
func readFromStart(f *os.File) ([]byte, error) {
	var buf [512]byte
	var out []byte
	for off := int64(0); ; {
		n, err := f.ReadAt(buf[:], off)
		out = append(out, buf[:n]...)
		off += int64(n)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// pids lists the processes in the cgroup (cgroup.procs leaves zombies
// out); nil when it cannot be read.
func (cg *treeCgroup) pids() []int {
	b, err := readFromStart(cg.procs)
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range bytes.Fields(b) {
		if pid, err := strconv.Atoi(string(f)); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// populated reports whether any process, an exiting one included, is
// still in the cgroup; true when it cannot tell. cgroup.events is one
// short record the kernel writes whole, so one read from its start has
// it.
func (cg *treeCgroup) populated() bool {
	var buf [256]byte
	n, err := syscall.Pread(int(cg.events.Fd()), buf[:], 0)
	if err != nil || n <= 0 {
		return true
	}
	return !bytes.Contains(buf[:n], []byte("populated 0\n"))
}

// kill kills every process in the cgroup at once.
func (cg *treeCgroup) kill() {
	cg.killed = true
	_ = os.WriteFile(cg.dir+"/cgroup.kill", []byte("1"), 0)
}

// remove closes cg's descriptors and removes the directory, killing what
// is still in it (a process still exiting) until it can.
func (cg *treeCgroup) remove() {
	if cg.procs != nil {
		cg.procs.Close()
	}
	if cg.events != nil {
		cg.events.Close()
	}
	unix.Close(cg.fd)
	for i := 0; ; i++ {
		err := syscall.Rmdir(cg.dir)
		if err == nil || err == syscall.ENOENT || i == 100 {
			return
		}
		// Busy: a process still exiting; kill it and look again.
		cg.kill()
		time.Sleep(pollInterval)
	}
}
