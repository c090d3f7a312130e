//go:build linux

package contain

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// watcher is the one process per Manager that outlives the gateway: the
// toolgate binary re-executed (supervisor.WatchArg0), reading a pipe only
// the gateway writes. When the gateway dies, even by SIGKILL, the pipe
// ends and the watcher kills everything still contained (the cgroup
// subtree, or the sessions it was told of). It costs one re-exec per
// gateway, not per call.
type watcher struct {
	w    *os.File
	pid  int
	done chan struct{}
}

// ensureWatcherLocked starts the watcher, or a new one when a command
// killed the last; m.mu is held.
func (m *Manager) ensureWatcherLocked() error {
	if m.watch != nil {
		select {
		case <-m.watch.done:
		default:
			return nil
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	env := []string{}
	if raceBuild {
		env = append(env, supervisor.RaceEnv)
	}
	cmd := &exec.Cmd{
		Path:        supervisor.SelfExe,
		Args:        append([]string{supervisor.WatchArg0}, supervisor.WatchArgs(m.cgroup)...),
		Env:         env,
		Stdin:       r,
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return err
	}
	wt := &watcher{w: w, pid: cmd.Process.Pid, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(wt.done)
	}()
	m.watch = wt
	for sid := range m.sessions {
		wt.send('+', sid)
	}
	return nil
}

// send tells the watcher a session started ('+') or ended ('-'); a nil
// or dead watcher ignores it.
func (w *watcher) send(op byte, sid int) {
	if w == nil {
		return
	}
	_, _ = w.w.Write(append(strconv.AppendInt([]byte{op}, int64(sid), 10), '\n'))
}

// is reports whether pid is the watcher's (a child this process started
// in a session of its own, and so no orphan).
func (w *watcher) is(pid int) bool { return w != nil && w.pid == pid }

// close ends the watcher's input and waits up to within for it to finish
// its cleanup.
func (w *watcher) close(within time.Duration) {
	w.w.Close()
	select {
	case <-w.done:
	case <-time.After(within):
	}
}
