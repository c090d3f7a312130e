//go:build !linux

package contain

import (
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// Manager, where there is no Linux, starts each command in a process
// group of its own and stops that group: processes that leave it are
// beyond reach, and max_memory is not enforced.
type Manager struct{ opts Options }

// New returns a Manager.
func New(opts Options) *Manager { return &Manager{opts: opts} }

// Mode is ModeSession: the only one here.
func (m *Manager) Mode() Mode { return ModeSession }

// Start starts cmd in a process group of its own.
func (m *Manager) Start(cmd *exec.Cmd, maxMemory int64) (*Tree, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Tree{pid: cmd.Process.Pid, cmd: cmd}, nil
}

// Close does nothing here.
func (m *Manager) Close() error { return nil }

// Tree is a command's process group.
type Tree struct {
	pid int
	cmd *exec.Cmd
}

// Pid is the command's process id and group.
func (t *Tree) Pid() int { return t.pid }

// Stop terminates the group, then kills it after grace.
func (t *Tree) Stop(grace time.Duration) Stopped {
	if syscall.Kill(-t.pid, 0) != nil {
		return Stopped{}
	}
	_ = syscall.Kill(-t.pid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for syscall.Kill(-t.pid, 0) == nil && time.Now().Before(deadline) {
		time.Sleep(pollInterval)
	}
	_ = syscall.Kill(-t.pid, syscall.SIGKILL)
	return Stopped{}
}

// Kill kills the group.
func (t *Tree) Kill() { _ = syscall.Kill(-t.pid, syscall.SIGKILL) }

// Exit is the command's own exit (there is no helper here).
func (t *Tree) Exit() Exit {
	st := t.cmd.ProcessState
	if st == nil {
		return Exit{StartErr: errors.New("the command was not waited for")}
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	return Exit{Reported: true, Status: ws}
}

// Release does nothing here.
func (t *Tree) Release() {}
