//go:build linux

package contain

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// Manager starts commands contained and stops them whole. One gateway
// process has one, shared by everything that starts processes (pack
// calls, background jobs, stdio servers): in session mode with a
// subreaper it must know every child it started. Build it with New; it
// sets itself up on first use and lives until Close.
type Manager struct {
	opts Options

	once sync.Once
	err  error
	// Set up once, then read-only.
	mode        Mode
	cgroup      string // the gateway's cgroup directory, "" in session mode
	helperPath  string // what a tree's first process executes
	helperArgv0 string
	portable    bool     // helperPath is the re-executed toolgate
	memfd       *os.File // holds the native helper
	self        int
	selfSID     int
	subreaper   bool
	seq         atomic.Uint64

	mu sync.Mutex
	// sessions are the helpers of running trees in session mode: the
	// children this process started and os/exec will reap.
	sessions map[int]bool
	// orphans were adopted (subreaper) and killed, and wait to be reaped.
	orphans map[int]bool
	// idle are emptied cgroups kept for the next trees (cgroup mode).
	idle     []*treeCgroup
	scanning bool
	watch    *watcher
	closed   bool
}

// New returns a Manager; nothing happens until the first Start.
func New(opts Options) *Manager {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Manager{opts: opts, sessions: map[int]bool{}, orphans: map[int]bool{}}
}

// Mode is the mode the Manager chose (after its first Start; "" before).
func (m *Manager) Mode() Mode {
	if err := m.setup(); err != nil {
		return ""
	}
	return m.mode
}

func (m *Manager) setup() error {
	m.once.Do(func() { m.err = m.init() })
	return m.err
}

func (m *Manager) init() error {
	if _, err := ParseMode(string(m.opts.Mode)); err != nil {
		return err
	}
	m.self = os.Getpid()
	sid, err := unix.Getsid(0)
	if err != nil {
		return fmt.Errorf("reading this process's session: %w", err)
	}
	m.selfSID = sid
	m.helperPath, m.helperArgv0, m.portable = supervisor.SelfExe, supervisor.HelperArg0, true
	if f, err := memfdHelper(); err == nil {
		path := "/proc/" + strconv.Itoa(m.self) + "/fd/" + strconv.Itoa(int(f.Fd()))
		if perr := probe(path, -1); perr == nil {
			m.memfd, m.helperPath, m.helperArgv0, m.portable = f, path, "toolgate-contain", false
		} else {
			f.Close()
			m.opts.Log.Warn("the native containment helper cannot run here; each call pays a re-executed toolgate instead", "err", perr)
		}
	}
	m.mode = ModeSession
	if m.opts.Mode != ModeSession {
		dir, err := makeCgroupParent(m.self, m.helperPath)
		switch {
		case err == nil:
			m.mode, m.cgroup = ModeCgroup, dir
			m.opts.Log.Debug("commands are contained in cgroups", "dir", dir)
		case m.opts.Mode == ModeCgroup:
			return fmt.Errorf("containment: %w (TOOLGATE_CONTAINMENT=cgroup asks for one)", err)
		default:
			m.opts.Log.Info("no cgroup can be made here; commands are contained by session", "reason", err.Error())
		}
	}
	if m.mode == ModeSession && m.opts.Subreaper {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("becoming a child subreaper: %w", err)
		}
		m.subreaper = true
	}
	return nil
}

// memfdHelper writes the native helper into a sealed, close-on-exec
// memfd; an error where there is none for this architecture.
func memfdHelper() (*os.File, error) {
	if nativeHelper == "" {
		return nil, errors.New("no native helper for this architecture")
	}
	fd, err := unix.MemfdCreate("toolgate-contain", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) { // a kernel before MFD_EXEC (6.3)
		fd, err = unix.MemfdCreate("toolgate-contain", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "toolgate-contain")
	if _, err := io.WriteString(f, nativeHelper); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// probe runs the helper at path with no command line (it exits 125 at
// once), in the cgroup cgroupFD names when not -1: whether it runs here.
func probe(path string, cgroupFD int) error {
	cmd := &exec.Cmd{Path: path, Args: []string{"toolgate-contain-probe"}, Env: []string{}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cgroupFD >= 0 {
		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, cgroupFD
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 125 {
		return nil
	}
	if err == nil {
		return errors.New("the helper probe exited 0, want 125")
	}
	return err
}

// Start runs cmd contained: its program becomes the child of a helper
// that sets its address-space bound (maxMemory bytes, soft and hard; 0 for
// none) before the program's first instruction, in a session of its own
// and, in cgroup mode, a cgroup of its own. cmd is rewritten (Path, Args,
// ExtraFiles, SysProcAttr) and started; the caller waits for it as usual
// (cmd.Wait reaps the helper, which exits right after the command), then
// calls the Tree's Stop, Exit and Release.
func (m *Manager) Start(cmd *exec.Cmd, maxMemory int64) (*Tree, error) {
	if err := m.setup(); err != nil {
		return nil, err
	}
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	repR, repW, err := ChildPipe()
	if err != nil {
		return nil, fmt.Errorf("helper report pipe: %w", err)
	}
	t := &Tree{m: m, report: repR, program: cmd.Path}
	extra := append(cmd.ExtraFiles[:len(cmd.ExtraFiles):len(cmd.ExtraFiles)], repW)
	args := supervisor.HelperArgs(3+len(cmd.ExtraFiles), maxMemory, cmd.Path, cmd.Args)
	cmd.Path, cmd.Args, cmd.ExtraFiles = m.helperPath, append([]string{m.helperArgv0}, args...), extra
	if m.portable && raceBuild {
		cmd.Env = append(append([]string{}, cmd.Env...), supervisor.RaceEnv)
	}
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	attr.Setsid, attr.Setpgid, attr.Pgid, attr.Setctty, attr.Foreground = true, false, 0, false, false
	cmd.SysProcAttr = attr
	if m.cgroup != "" {
		if t.cgroup, err = m.takeCgroup(); err != nil {
			repR.Close()
			repW.Close()
			return nil, err
		}
		attr.UseCgroupFD, attr.CgroupFD = true, t.cgroup.fd
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		err = errors.New("the gateway is shutting down")
	} else {
		if werr := m.ensureWatcherLocked(); werr != nil {
			m.opts.Log.Warn("the containment watcher could not start; a gateway killed outright would leave its commands running", "err", werr)
		}
		// Under mu: the orphan scan must never see this child before it is
		// registered.
		err = cmd.Start()
		if err == nil && m.cgroup == "" {
			m.registerLocked(cmd.Process.Pid)
		}
		m.mu.Unlock()
	}
	repW.Close()
	if err != nil {
		repR.Close()
		if t.cgroup != nil {
			m.giveBack(t.cgroup)
		}
		return nil, err
	}
	t.pid = cmd.Process.Pid
	return t, nil
}

// registerLocked records a session helper; m.mu is held.
func (m *Manager) registerLocked(pid int) {
	m.sessions[pid] = true
	m.watch.send('+', pid)
	if m.subreaper && !m.scanning {
		m.scanning = true
		go m.scanOrphans()
	}
}

func (m *Manager) unregister(pid int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, pid)
	m.watch.send('-', pid)
}

// Close stops the watcher, which kills whatever is still contained and
// removes the gateway's cgroups, and refuses new trees. Every tree should
// have been stopped first.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	// m.watch stays: the orphan scan must still know the watcher's pid.
	w := m.watch
	m.mu.Unlock()
	m.closeIdle()
	if w != nil {
		w.close(15 * time.Second)
	}
	if m.memfd != nil {
		m.memfd.Close()
	}
	return nil
}
