package contain

import (
	"fmt"
	"log/slog"
	"syscall"
	"time"
)

// Mode is how a Manager holds a command's processes together.
type Mode string

// The modes. The zero Mode chooses: a cgroup per tree where one can be
// made, else sessions.
const (
	ModeAuto Mode = ""
	// ModeCgroup puts each tree in a cgroup v2 of its own, from its first
	// instruction on (CLONE_INTO_CGROUP), and kills it with cgroup.kill.
	ModeCgroup Mode = "cgroup"
	// ModeSession starts each tree in a session of its own and finds its
	// processes by session and by parent links in /proc; with
	// Options.Subreaper, processes orphaned below the gateway come back to
	// it and are killed at once.
	ModeSession Mode = "session"
)

// ParseMode reads a mode as an operator writes it (TOOLGATE_CONTAINMENT):
// "", "auto", "cgroup" or "session".
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "auto":
		return ModeAuto, nil
	case string(ModeCgroup), string(ModeSession):
		return Mode(s), nil
	}
	return "", fmt.Errorf("TOOLGATE_CONTAINMENT=%q: use cgroup, session or auto (the default: a cgroup where one can be made)", s)
}

// Options configure a Manager.
type Options struct {
	// Mode says how trees are held; ModeAuto chooses.
	Mode Mode
	// Subreaper lets a Manager in session mode make this process a child
	// subreaper (PR_SET_CHILD_SUBREAPER), so that processes orphaned below
	// it — a command that killed its helper, a double fork — come back to
	// it, and kill every such process it did not start. Only a process
	// that starts its children with setsid through this Manager alone may
	// ask for it (the gateway's binary); never a test binary, whose other
	// children would be taken for orphans.
	Subreaper bool
	// Log receives which mode was chosen and why (nil: discarded).
	Log *slog.Logger
}

// Stopped is what stopping a tree found and did.
type Stopped struct {
	// Killed counts the processes other than the helper that were still
	// running when the tree was stopped (the command itself, when it was
	// stopped early, and whatever it left behind); Outside counts those of
	// them that had left the helper's process group.
	Killed, Outside int
	// Forced is set when something was still running at the end of the
	// grace period and was killed with SIGKILL.
	Forced bool
	// Cleanup is how long stopping took.
	Cleanup time.Duration
}

// Exit is how the command ended, as its helper reported it.
type Exit struct {
	// Reported is false when the helper ended without saying (it was
	// killed, or killed with the tree).
	Reported bool
	// Status is the command's wait status when Reported.
	Status syscall.WaitStatus
	// StartErr is set when the program could not be run at all (Reported
	// is then false).
	StartErr error
}

// Err is the command's exit as os/exec words it ("exit status 3",
// "signal: terminated"); nil for success.
func (e Exit) Err() error {
	switch {
	case e.StartErr != nil:
		return e.StartErr
	case !e.Reported:
		return fmt.Errorf("the command's helper ended without a report")
	case e.Status.Signaled():
		return fmt.Errorf("signal: %v", e.Status.Signal())
	case e.Status.ExitStatus() != 0:
		return fmt.Errorf("exit status %d", e.Status.ExitStatus())
	}
	return nil
}

// pollInterval is how often a stopping tree is looked at again.
const pollInterval = 2 * time.Millisecond

// killWait bounds how long a tree killed with SIGKILL may take to empty
// (a process in uninterruptible sleep) before Stop gives up on it.
const killWait = 30 * time.Second
