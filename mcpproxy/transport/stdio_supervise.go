package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// maxReport bounds what is read from a supervisor's report pipe.
const maxReport = 64 << 10

// superviseCmd rewrites cmd to run its program under the supervisor at
// path — descriptors 3 and 4 its control and report pipes — and returns
// the gateway's ends of both. The supervisor stops the tree when asked
// (a byte on ctl) and when ctl reaches end of file: when the gateway dies.
func superviseCmd(cmd *exec.Cmd, path string) (ctl, report *os.File, err error) {
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("supervisor control pipe: %w", err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, nil, fmt.Errorf("supervisor report pipe: %w", err)
	}
	args := supervisor.Args{Grace: stdioKillGrace, Program: cmd.Path, Argv: cmd.Args}
	cmd.Path, cmd.Args = path, args.Encode()
	if supervisor.RaceEnv != "" {
		cmd.Env = append(append([]string{}, cmd.Env...), supervisor.RaceEnv)
	}
	cmd.ExtraFiles = []*os.File{ctlR, repW}
	return ctlW, repR, nil
}

// supervisedExit turns the supervisor's report into the server's own exit,
// as cmd.Wait would have given it for the server run directly; werr (the
// supervisor's) stands when there is no report.
func supervisedExit(report *os.File, werr error) error {
	b, err := io.ReadAll(io.LimitReader(report, maxReport))
	var rep supervisor.Report
	if err != nil || len(b) == 0 || json.Unmarshal(b, &rep) != nil {
		return werr
	}
	switch {
	case rep.StartError != "":
		return errors.New("could not start: " + rep.StartError)
	case rep.Signal != 0:
		return errors.New("signal: " + syscall.Signal(rep.Signal).String())
	case rep.Exit != 0:
		return fmt.Errorf("exit status %d", rep.Exit)
	}
	return nil
}

// closeChildEnds closes, once the child was started (or failed to be),
// the descriptors only the child needs.
func closeChildEnds(cmd *exec.Cmd) {
	for _, f := range cmd.ExtraFiles {
		f.Close()
	}
}

// closeFiles closes the gateway's ends of a supervisor's pipes, if any.
func closeFiles(files ...*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
