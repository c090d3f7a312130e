package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// The names (argv[0]) under which the toolgate binary runs as a command's
// supervisor and as the memory-limit shim (MaybeSupervise).
const (
	supervisorArg0 = "toolgate-supervise"
	limitExecArg0  = "toolgate-limit-exec"
)

// supervisorMargin is how long past its kill grace a supervisor has to
// report before the gateway kills its group itself: the supervisor kills
// its descendants at the end of the grace, then needs a moment to reap them.
const supervisorMargin = 2 * time.Second

// maxReportBytes bounds what is read from a supervisor's report pipe.
const maxReportBytes = 64 << 10

// superviseReport is what the supervisor tells the gateway about a run.
type superviseReport struct {
	// Exit is the command's exit status, Signal the signal that killed it
	// (0 when it exited).
	Exit   int `json:"exit"`
	Signal int `json:"signal,omitempty"`
	// MaxRSS is the command's peak resident set, in bytes.
	MaxRSS int64 `json:"maxrss,omitempty"`
	// Killed counts descendants still running when the command ended or
	// was stopped, all of them killed; OutsideGroup counts those among them
	// that had left the process group (setsid).
	Killed       int `json:"killed,omitempty"`
	OutsideGroup int `json:"outside_group,omitempty"`
	// CleanupMS is how long stopping the descendants took.
	CleanupMS int64 `json:"cleanup_ms,omitempty"`
	// StartError is set when the command could not be started.
	StartError string `json:"start_error,omitempty"`
}

// superviseArgs is the supervisor's command line: -files N -as BYTES
// -grace MS -- PROGRAM ARGV0 ARGS...
type superviseArgs struct {
	files   int
	as      int64
	grace   time.Duration
	program string
	argv    []string
}

func (a superviseArgs) encode() []string {
	out := []string{supervisorArg0, "-files", strconv.Itoa(a.files), "-as", strconv.FormatInt(a.as, 10),
		"-grace", strconv.FormatInt(a.grace.Milliseconds(), 10), "--", a.program}
	return append(out, a.argv...)
}

func parseSuperviseArgs(args []string) (superviseArgs, error) {
	var a superviseArgs
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			return a, fmt.Errorf("option %s has no value", args[0])
		}
		n, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || n < 0 {
			return a, fmt.Errorf("option %s: %q is not a count", args[0], args[1])
		}
		switch args[0] {
		case "-files":
			a.files = int(n)
		case "-as":
			a.as = n
		case "-grace":
			a.grace = time.Duration(n) * time.Millisecond
		default:
			return a, fmt.Errorf("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 3 {
		return a, fmt.Errorf("no program after --")
	}
	a.program, a.argv = args[1], args[2:]
	return a, nil
}

// started is a running command with the read ends of its output pipes and,
// when it runs under a supervisor, the supervisor's pipes.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr *os.File
	started        time.Time
	// leaderDone is closed once the direct child (the supervisor, or the
	// command itself) has been reaped.
	leaderDone chan struct{}
	// ctl (write end) asks the supervisor to stop when closed; report is
	// the read end of its report. Both nil for a direct run.
	ctl, report *os.File
	ctlOnce     sync.Once
	rep         *superviseReport
	// cleanup removes what the run needed only while it ran (the empty
	// directory of a confined command).
	cleanup func()
}

// exitInfo is how a run ended, whichever way it was run.
type exitInfo struct {
	code   int
	signal syscall.Signal
	// maxRSS is the command's peak resident set in bytes (0: unknown).
	maxRSS int64
	// killed counts descendants left running when the command ended or was
	// stopped; outside those of them that had left its process group.
	killed, outside int
	// supervisorErr is set when a supervisor was used but said nothing.
	supervisorErr string
}

// wait reaps the direct child in the background.
func (p *started) wait() {
	p.leaderDone = make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(p.leaderDone)
	}()
}

// stop makes sure nothing the command started outlives the run, and
// returns once the direct child is reaped. Under a supervisor, closing the
// control pipe asks it to stop the whole tree (SIGTERM, its grace, then
// SIGKILL, setsid children included); if it does not end within grace plus
// a margin, its process group is killed here. Run directly, the command's
// process group is stopped the same way (processes that left the group are
// then beyond reach).
func (p *started) stop(grace time.Duration) {
	if p.ctl == nil {
		stopGroup(p.cmd.Process.Pid, p.cmd.Process, p.leaderDone, grace)
		return
	}
	select {
	case <-p.leaderDone:
		return
	default:
	}
	p.closeCtl()
	t := time.NewTimer(grace + supervisorMargin)
	defer t.Stop()
	select {
	case <-p.leaderDone:
	case <-t.C:
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		_ = p.cmd.Process.Kill()
		<-p.leaderDone
	}
}

func (p *started) closeCtl() {
	p.ctlOnce.Do(func() { p.ctl.Close() })
}

// exit reports how the finished run ended; call it after stop.
func (p *started) exit() exitInfo {
	if p.cleanup != nil {
		p.cleanup()
	}
	state := p.cmd.ProcessState
	ex := exitInfo{code: state.ExitCode()}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		ex.signal = ws.Signal()
	}
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		ex.maxRSS = ru.Maxrss * 1024
	}
	if p.report == nil {
		return ex
	}
	p.closeCtl()
	rep, err := readReport(p.report)
	p.report.Close()
	if err != nil {
		ex.supervisorErr = fmt.Sprintf("the command's supervisor ended without a report (%v); its exit status is the supervisor's", err)
		return ex
	}
	p.rep = rep
	ex = exitInfo{code: rep.Exit, maxRSS: rep.MaxRSS, killed: rep.Killed, outside: rep.OutsideGroup}
	if rep.Signal != 0 {
		ex.code, ex.signal = -1, syscall.Signal(rep.Signal)
	}
	return ex
}

func readReport(f *os.File) (*superviseReport, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxReportBytes))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("empty report")
	}
	var rep superviseReport
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// openBoundFiles opens inv's path_within arguments beneath their roots, in
// descriptor order. On error nothing stays open.
func openBoundFiles(inv *Invocation) ([]*os.File, error) {
	var o opener
	files := make([]*os.File, 0, len(inv.Bound))
	for i, b := range inv.Bound {
		if b.FD != firstBoundFD+i {
			closeAll(files)
			return nil, fmt.Errorf("parameter %q: descriptor %d out of order (a runner bug)", b.Param, b.FD)
		}
		f, err := o.openBound(b)
		if err != nil {
			closeAll(files)
			return nil, &ArgError{Param: b.Param, Msg: fmt.Sprintf("%q %v", b.Value, err)}
		}
		files = append(files, f)
	}
	return files, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
