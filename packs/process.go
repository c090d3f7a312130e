package packs

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
)

// started is a running command with the read ends of its output pipes
// and its contained tree.
type started struct {
	cmd            *exec.Cmd
	tree           *contain.Tree
	stdout, stderr *os.File
	started        time.Time
	// leaderDone is closed once the direct child (the command's helper)
	// has been reaped.
	leaderDone chan struct{}
	// stoppedEarly is set when the run was stopped before the command
	// ended (timeout, cancel, output cap, gateway shutdown).
	stoppedEarly bool
	stopped      contain.Stopped
	// cleanup removes what the run needed only while it ran (the empty
	// directory of a confined command).
	cleanup func()
	// created are the files the gateway created for the run (creates:),
	// removed again if it fails.
	created createdFiles
}

// exitInfo is how a run ended.
type exitInfo struct {
	code   int
	signal syscall.Signal
	// maxRSS is the command's peak resident set in bytes (0: unknown).
	maxRSS int64
	// killed counts processes left running when the command ended or was
	// stopped; outside those of them that had left its process group.
	killed, outside int
	// supervisorErr is set when the command's helper ended without saying
	// how the command did.
	supervisorErr string
	// startErr is set when the program could not be run at all.
	startErr error
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
// returns once the helper is reaped: every process of the tree (its
// cgroup, or its session and what descends from it) gets SIGTERM, up to
// grace to exit, then SIGKILL — setsid and double-forked children, and
// those of a command that killed its helper, included (package contain).
func (p *started) stop(grace time.Duration) {
	select {
	case <-p.leaderDone:
	default:
		p.stoppedEarly = true
	}
	p.stopped = p.tree.Stop(grace)
	<-p.leaderDone
}

// exit reports how the finished run ended; call it after stop.
func (p *started) exit() exitInfo {
	if p.cleanup != nil {
		p.cleanup()
	}
	rep := p.tree.Exit()
	p.tree.Release()
	ex := exitInfo{killed: p.stopped.Killed, outside: p.stopped.Outside}
	state := p.cmd.ProcessState
	// The helper's rusage includes the command's (it waited for it).
	if ru, ok := state.SysUsage().(*syscall.Rusage); ok {
		ex.maxRSS = ru.Maxrss * 1024
	}
	helper, _ := state.Sys().(syscall.WaitStatus)
	switch {
	case rep.StartErr != nil:
		ex.code, ex.startErr = 127, rep.StartErr
	case rep.Reported && rep.Status.Signaled():
		ex.code, ex.signal = -1, rep.Status.Signal()
	case rep.Reported:
		ex.code = rep.Status.ExitStatus()
	case p.stoppedEarly && helper.Signaled():
		// Stopped by the gateway, the helper killed with the tree.
		ex.code, ex.signal = -1, helper.Signal()
	default:
		ex.code = -1
		ex.supervisorErr = fmt.Sprintf("the command's supervisor ended without a report (%v) before the command did; everything the command started was stopped", state)
	}
	return ex
}

// openBoundFiles opens inv's path_within arguments beneath their roots, in
// descriptor order, creating the missing files of parameters listed under
// creates:. On error nothing stays open and nothing created stays.
func openBoundFiles(inv *Invocation) ([]*os.File, createdFiles, error) {
	files := make([]*os.File, 0, len(inv.Bound))
	var created createdFiles
	for i, b := range inv.Bound {
		if b.FD != firstBoundFD+i {
			closeAll(files)
			created.settle(true)
			return nil, nil, fmt.Errorf("parameter %q: descriptor %d out of order (a runner bug)", b.Param, b.FD)
		}
		f, c, err := openOrCreateBound(b)
		if err != nil {
			closeAll(files)
			created.settle(true)
			return nil, nil, &ArgError{Param: b.Param, Msg: fmt.Sprintf("%q %v", b.Value, err)}
		}
		files = append(files, f)
		if c != nil {
			created = append(created, c)
		}
	}
	return files, created, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}
