//go:build linux

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

// Linux constants the frozen syscall package lacks. The supervisor uses
// syscall rather than golang.org/x/sys/unix, and os rather than os/exec,
// so that its package initialises right after os and os/signal — before
// the rest of the binary (protobuf registries, JSON Schema metaschemas, …),
// which a supervisor never needs (see package doc).
const (
	prSetChildSubreaper = 36       // PR_SET_CHILD_SUBREAPER
	ptraceOExitKill     = 0x100000 // PTRACE_O_EXITKILL
)

// Default is the supervisor a runner uses: the running binary, as the
// child being started sees it (even if the file was replaced since).
const Default = selfExe

// selfExe names the running binary in a child being started.
const selfExe = "/proc/self/exe"

func superviseMain(args []string) int {
	// A supervisor waits on one command: one P keeps the runtime from
	// starting threads to run in parallel what never needs to (a tenth of
	// a supervised call's CPU).
	runtime.GOMAXPROCS(1)
	a, err := ParseArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolgate supervisor: %v\n", err)
		return 125
	}
	ctlFD, reportFD := FirstFD+a.Files, FirstFD+a.Files+1
	syscall.CloseOnExec(ctlFD)
	syscall.CloseOnExec(reportFD)
	// Waiting on the control pipe through the runtime's poller, not in a
	// blocked read, spares the runtime a thread of its own for it.
	_ = syscall.SetNonblock(ctlFD, true)
	ctl, report := os.NewFile(uintptr(ctlFD), "control"), os.NewFile(uintptr(reportFD), "report")
	rep := supervise(a, ctl)
	_, _ = report.Write(append(rep.Encode(), '\n'))
	_ = report.Close()
	switch {
	case rep.StartError != "":
		return 127
	case rep.Signal != 0:
		return 128 + rep.Signal
	}
	return rep.Exit
}

// supervise starts the command, waits for it or for a stop request, and
// returns once no descendant is left.
func supervise(a Args, ctl *os.File) Report {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0, 0, 0, 0); e != 0 {
		return Report{StartError: "cannot become a child subreaper: " + e.Error()}
	}
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	files := make([]*os.File, a.Files)
	for i := range files {
		files[i] = os.NewFile(uintptr(FirstFD+i), "bound")
	}
	env := os.Environ()
	if RaceEnv != "" {
		env = slices.DeleteFunc(env, func(kv string) bool { return kv == RaceEnv })
	}
	startCommand := func(limit string) (*os.Process, error) {
		path, argv := a.Program, a.Argv
		attr := &os.ProcAttr{Env: env, Files: append([]*os.File{os.Stdin, os.Stdout, os.Stderr}, files...)}
		switch limit {
		case LimitTraced:
			attr.Sys = &syscall.SysProcAttr{Ptrace: true}
		case LimitShim:
			// The running binary itself (even if replaced on disk since).
			path = selfExe
			argv = append([]string{LimitArg0, strconv.FormatInt(a.AS, 10), "--", a.Program}, a.Argv...)
		}
		return os.StartProcess(path, argv, attr)
	}
	var limit string
	switch {
	case a.AS > 0 && plainProgram(a.Program):
		limit = LimitTraced
	case a.AS > 0:
		limit = LimitShim
	}
	// ptrace requests must come from the thread that started the tracee.
	runtime.LockOSThread()
	proc, err := startCommand(limit)
	if err != nil && limit == LimitTraced && errors.Is(err, syscall.EPERM) {
		// Tracing is refused here (a seccomp profile, or this supervisor
		// is itself traced): the shim sets the bound instead.
		limit = LimitShim
		proc, err = startCommand(limit)
	}
	if err != nil {
		return Report{StartError: err.Error()}
	}
	if limit == LimitTraced {
		if err := limitTraced(proc.Pid, a.AS); err != nil {
			_ = proc.Kill()
			_, _ = proc.Wait()
			return Report{StartError: "setting max_memory (RLIMIT_AS " + strconv.FormatInt(a.AS, 10) + "): " + err.Error()}
		}
	}
	for _, f := range files {
		f.Close()
	}
	child := proc.Pid
	stop := make(chan struct{})
	go func() {
		var b [1]byte
		_, _ = ctl.Read(b[:]) // a byte, end of file (the gateway died) or an error: stop
		close(stop)
	}()

	rep := Report{Limit: limit}
	done := false
	onChild := func(ws syscall.WaitStatus, ru *syscall.Rusage) {
		done = true
		rep.MaxRSS = ru.Maxrss * 1024
		if ws.Signaled() {
			rep.Signal = int(ws.Signal())
		} else {
			rep.Exit = ws.ExitStatus()
		}
	}
	stopped := false
	// SIGCHLD wakes the loop; the ticker covers a signal dropped while
	// the channel was full.
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !done && !stopped {
		select {
		case <-tick.C:
			reapAll(child, onChild)
		case s := <-sigs:
			if s == syscall.SIGCHLD {
				reapAll(child, onChild)
			} else {
				stopped = true
			}
		case <-stop:
			stopped = true
		}
	}
	start := time.Now()
	rep.Killed, rep.OutsideGroup = killDescendants(a.Grace, child, onChild)
	if rep.Killed > 0 {
		rep.CleanupMS = time.Since(start).Milliseconds()
	}
	_ = proc.Release()
	return rep
}

// reapAll collects every exited child without blocking, passing the
// command's own status to onChild. It reports whether any child is left.
func reapAll(child int, onChild func(syscall.WaitStatus, *syscall.Rusage)) bool {
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil: // ECHILD: none left
			return false
		case pid == 0:
			return true
		case pid == child:
			onChild(ws, &ru)
		}
	}
}

// killPollInterval is how often a stopping tree is checked for survivors.
const killPollInterval = 5 * time.Millisecond

// killDescendants stops every descendant: SIGTERM, up to grace for them to
// exit, then SIGKILL until none is left. Orphans re-parent to the
// supervisor (it is their subreaper), so repeating the walk finds even
// those a dying parent leaves behind. It returns how many were running
// and how many of those had left the process group.
func killDescendants(grace time.Duration, child int, onChild func(syscall.WaitStatus, *syscall.Rusage)) (killed, outside int) {
	self := os.Getpid()
	pgid := syscall.Getpgrp()
	seen := map[int]bool{}
	count := func(pids []procInfo) {
		for _, p := range pids {
			if !seen[p.pid] {
				seen[p.pid] = true
				killed++
				if p.pgid != pgid {
					outside++
				}
			}
		}
	}
	if !reapAll(child, onChild) {
		return 0, 0
	}
	pids := descendants(self)
	count(pids)
	for _, p := range pids {
		_ = syscall.Kill(p.pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(grace)
	for reapAll(child, onChild) && time.Now().Before(deadline) {
		if len(descendants(self)) == 0 {
			break
		}
		time.Sleep(killPollInterval)
	}
	for reapAll(child, onChild) {
		pids := descendants(self)
		count(pids)
		for _, p := range pids {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
		time.Sleep(killPollInterval)
	}
	return killed, outside
}

// plainProgram reports whether path runs with the caller's own
// privileges: no setuid or setgid bit and no file capabilities. Only such
// a program is started traced, since tracing takes those privileges away
// (and so changes what the program may do); any other keeps the shim.
func plainProgram(path string) bool {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil || st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0 {
		return false
	}
	_, err := syscall.Getxattr(path, "security.capability", nil)
	return err != nil // ENODATA: none; ENOTSUP: the file system holds none
}

// limitTraced bounds the address space of a command started traced
// (PTRACE_TRACEME, so it stops at its execve, before the program's first
// instruction): it waits for that stop, sets RLIMIT_AS (soft and hard, so
// the command cannot raise it) and lets the command go, no longer traced.
// While it holds the command, the command dies with this supervisor
// (PTRACE_O_EXITKILL), so it never runs unbounded. This saves the shim's
// own start — a whole toolgate process — on every call.
func limitTraced(pid int, as int64) error {
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("waiting for the command to start: %w", err)
		}
		if !ws.Stopped() {
			return fmt.Errorf("the command ended before it started (wait status %#x)", uint32(ws))
		}
		if ws.StopSignal() == syscall.SIGTRAP {
			break
		}
		// A signal arrived before the exec: deliver it, wait on.
		if err := syscall.PtraceCont(pid, int(ws.StopSignal())); err != nil {
			return fmt.Errorf("resuming the command: %w", err)
		}
	}
	if err := syscall.PtraceSetOptions(pid, ptraceOExitKill); err != nil {
		return fmt.Errorf("tracing the command: %w", err)
	}
	lim := syscall.Rlimit{Cur: uint64(as), Max: uint64(as)}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), syscall.RLIMIT_AS, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		return e
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		return fmt.Errorf("releasing the command: %w", err)
	}
	return nil
}

// limitExecMain is the memory-limit shim: toolgate-limit-exec BYTES --
// PROGRAM ARGV0 ARGS... sets RLIMIT_AS (soft and hard, so the command
// cannot raise it) and executes the program in its place. Everything the
// exec needs is built before the limit is set, so nothing is allocated
// under it.
func limitExecMain(args []string) int {
	if len(args) < 4 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "toolgate limit-exec: usage: BYTES -- PROGRAM ARGV0 [ARGS...]")
		return 125
	}
	as, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || as == 0 {
		fmt.Fprintf(os.Stderr, "toolgate limit-exec: %q is not a byte count\n", args[0])
		return 125
	}
	path, err := syscall.BytePtrFromString(args[2])
	if err != nil {
		return 125
	}
	argv, err := syscall.SlicePtrFromStrings(args[3:])
	if err != nil {
		return 125
	}
	envv, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return 125
	}
	lim := syscall.Rlimit{Cur: as, Max: as}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, syscall.RLIMIT_AS, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "toolgate limit-exec: setting max_memory (RLIMIT_AS %d): %v\n", as, e)
		return 126
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	fmt.Fprintf(os.Stderr, "toolgate limit-exec: %s: %v\n", args[2], e)
	return 127
}

// procInfo is one process found under /proc.
type procInfo struct{ pid, pgid int }

// descendants lists the running (not zombie) processes below pid, by
// walking parent links in /proc.
func descendants(pid int) []procInfo {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]procInfo{}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, ppid, pgid, ok := ProcStat(n)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		children[ppid] = append(children[ppid], procInfo{pid: n, pgid: pgid})
	}
	var out []procInfo
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
	}
	return out
}
