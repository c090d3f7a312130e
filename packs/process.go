package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// supervisorMargin is how long past its kill grace a supervisor has to
// report before the gateway kills its group itself: the supervisor kills
// its descendants at the end of the grace, then needs a moment to reap them.
const supervisorMargin = 2 * time.Second

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
	rep         *supervisor.Report
	repErr      error
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
	default:
		p.closeCtl()
		t := time.NewTimer(grace + supervisorMargin)
		select {
		case <-p.leaderDone:
		case <-t.C:
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			_ = p.cmd.Process.Kill()
			<-p.leaderDone
		}
		t.Stop()
	}
	p.closeCtl()
	p.rep, p.repErr = readReport(p.report)
	p.report.Close()
	if p.repErr != nil {
		// The supervisor died without reporting (killed, crashed): what it
		// started may still run in its process group; stop that directly.
		stopGroup(p.cmd.Process.Pid, p.cmd.Process, p.leaderDone, grace)
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
	if p.repErr != nil {
		ex.supervisorErr = fmt.Sprintf("the command's supervisor ended without a report (%v); its process group was stopped", p.repErr)
		return ex
	}
	rep := p.rep
	ex = exitInfo{code: rep.Exit, maxRSS: rep.MaxRSS, killed: rep.Killed, outside: rep.OutsideGroup}
	if rep.Signal != 0 {
		ex.code, ex.signal = -1, syscall.Signal(rep.Signal)
	}
	return ex
}

// maxReportBytes bounds what is read from a report pipe.
const maxReportBytes = 64 << 10

// readReport reads the one report a supervisor writes before it exits.
func readReport(r io.Reader) (*supervisor.Report, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxReportBytes))
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, errors.New("empty report")
	}
	var rep supervisor.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, err
	}
	return &rep, nil
}

// openBoundFiles opens inv's path_within arguments beneath their roots, in
// descriptor order. On error nothing stays open.
func openBoundFiles(inv *Invocation) ([]*os.File, error) {
	files := make([]*os.File, 0, len(inv.Bound))
	for i, b := range inv.Bound {
		if b.FD != firstBoundFD+i {
			closeAll(files)
			return nil, fmt.Errorf("parameter %q: descriptor %d out of order (a runner bug)", b.Param, b.FD)
		}
		f, err := openBound(b)
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
