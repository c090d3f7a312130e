package packs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Run executes inv directly (no shell) in its own process group and waits
// for it, bounded by inv.Timeout, ctx and inv.MaxOutput: any of them
// stopping the run sends SIGTERM to the whole group and SIGKILL after the
// runner's KillGrace, and no process left in the group survives Run. A
// command that ran but failed comes back as a Result; the error is for a
// command that could not be started.
func (r *Runner) Run(ctx context.Context, inv *Invocation) (*Result, error) {
	name := inv.Pack + ":" + inv.Command
	if len(inv.Argv) == 0 {
		return nil, fmt.Errorf("command %s: empty argv", name)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("command %s not started: %w", name, err)
	}
	path, err := lookPathIn(inv.Argv[0], envValue(inv.Env, "PATH"), inv.Dir)
	if err != nil {
		return nil, fmt.Errorf("command %s cannot start: program %w", name, err)
	}
	var out *outputFile
	stdout := &bytes.Buffer{}
	var dst io.Writer = stdout
	if inv.WriteTo != "" {
		if out, err = openOutputFile(inv.WriteTo); err != nil {
			return nil, fmt.Errorf("command %s: %w", name, err)
		}
		dst = out.tmp
	}
	limit := inv.MaxOutput
	if limit <= 0 {
		limit = DefaultMaxOutput
	}
	timeout := inv.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	sink := newCappedSink(dst, limit)
	tail := &tailBuffer{max: StderrTailBytes}

	p, err := r.start(path, inv)
	if err != nil {
		if out != nil {
			out.discard()
		}
		return nil, fmt.Errorf("command %s cannot start: %w", name, err)
	}
	outDone, errDone := make(chan struct{}), make(chan struct{})
	go pump(p.stdout, sink, outDone)
	go pump(p.stderr, tail, errDone)
	leaderDone := make(chan struct{})
	go func() {
		_ = p.cmd.Wait()
		close(leaderDone)
	}()

	res := &Result{Argv: make([]string, len(inv.Argv))}
	for i, a := range inv.Argv {
		res.Argv[i] = r.Redact(a)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var cancelled error
	select {
	case <-leaderDone:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		cancelled = ctx.Err()
	case <-sink.stop:
	}
	grace := r.killGrace()
	stopGroup(p.cmd.Process.Pid, p.cmd.Process, leaderDone, grace)
	awaitReaders(grace, []*os.File{p.stdout, p.stderr}, outDone, errDone)
	res.Duration = time.Since(p.started)

	res.ExitCode = p.cmd.ProcessState.ExitCode()
	res.Truncated, res.CutBytes = sink.cut > 0, sink.cut
	res.OutputBytes = sink.kept + sink.cut
	res.StderrTail = r.redactCut(string(tail.Bytes()), tail.total > int64(len(tail.Bytes())), false)
	reasons := failureReasons(res, p.cmd.ProcessState, sink, cancelled, timeout, limit)
	if out != nil {
		if len(reasons) == 0 {
			if err := out.commit(); err != nil {
				reasons = append(reasons, err.Error())
			} else {
				res.WrittenTo = out.target
			}
		} else {
			out.discard()
			reasons = append(reasons, fmt.Sprintf("%s was left unchanged", out.target))
		}
	} else {
		res.Stdout = []byte(r.redactCut(stdout.String(), false, res.Truncated))
		r.parseOutput(inv, res)
	}
	res.Err = r.Redact(joinReasons(reasons...))
	return res, nil
}

// failureReasons lists why a finished run did not succeed, in the order
// an operator should read them; none means success.
func failureReasons(res *Result, state *os.ProcessState, sink *cappedSink, cancelled error, timeout time.Duration, limit int64) []string {
	var reasons []string
	switch {
	case cancelled != nil:
		reasons = append(reasons, fmt.Sprintf("cancelled (%v); the process group was stopped", cancelled))
	case res.TimedOut:
		reasons = append(reasons, fmt.Sprintf("timed out after %s; the process group was stopped (raise the pack's timeout or timeout_overrides if the command needs longer)", timeout))
	}
	if res.Truncated {
		reasons = append(reasons, fmt.Sprintf("output passed max_output (%d bytes) and the process group was stopped; at least %d more bytes were cut (narrow the query, or raise the pack's max_output)", limit, res.CutBytes))
	}
	if sink.writeErr != nil {
		reasons = append(reasons, fmt.Sprintf("writing the output failed: %v", sink.writeErr))
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		reasons = append(reasons, fmt.Sprintf("killed by signal %s", ws.Signal()))
	} else if res.ExitCode != 0 {
		reasons = append(reasons, fmt.Sprintf("exit status %d", res.ExitCode))
	}
	return reasons
}

// parseOutput fills Structured and StructuredContent (or ParseNote and an
// unparsed StructuredContent) for parse: json commands that succeeded or
// were cut.
func (r *Runner) parseOutput(inv *Invocation, res *Result) {
	if inv.Parse != "json" {
		return
	}
	// A cut run was stopped (exit -1) but its text still goes back, so it
	// gets a note and an object like any other unparsed output.
	if res.ExitCode != 0 && !res.Truncated {
		return
	}
	if res.Truncated {
		res.ParseNote = "output was cut at max_output, so it was not parsed as JSON; returned as text"
		res.StructuredContent = unparsedObject(res.ParseNote)
		return
	}
	v, err := parseJSON(res.Stdout)
	if err != nil {
		res.ParseNote = r.Redact("output was not valid JSON; returned as text: " + err.Error())
		res.StructuredContent = unparsedObject(res.ParseNote)
		return
	}
	res.Structured = redactValue(v, r.Redact)
	res.StructuredContent = StructuredObject(res.Structured)
}

// started is a running command with the read ends of its output pipes.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr *os.File
	started        time.Time
}

// start launches inv in a new process group with stdin from /dev/null.
// Its output goes to pipes the runner reads itself (not through exec's
// copying goroutines), so that waiting for the leader does not also wait
// for whatever else holds the pipes open.
func (r *Runner) start(path string, inv *Invocation) (*started, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        inv.Argv,
		Env:         inv.Env,
		Dir:         inv.Dir,
		Stdout:      outW,
		Stderr:      errW,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	t := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	return &started{cmd: cmd, stdout: outR, stderr: errR, started: t}, nil
}

// awaitReaders waits for the output readers to reach end of file. A
// process that escaped the group could hold the pipes open forever, so
// after grace the read ends are closed under the readers.
func awaitReaders(grace time.Duration, files []*os.File, done ...chan struct{}) {
	t := time.NewTimer(grace)
	defer t.Stop()
	for _, d := range done {
		select {
		case <-d:
		case <-t.C:
			for _, f := range files {
				f.Close()
			}
			<-d
		}
	}
	for _, f := range files {
		f.Close()
	}
}
