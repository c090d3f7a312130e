package packs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
)

// Run executes inv directly (no shell), contained, and waits for it,
// bounded by inv.Timeout, ctx and inv.MaxOutput: any of them stopping the
// run sends SIGTERM to the whole tree and SIGKILL after the runner's
// KillGrace, and no process the command started survives Run, whatever it
// did (setsid, double fork, killing its parent). A
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
		if out, err = openOutputFile(inv.WriteTo, inv.WriteRoot); err != nil {
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
	go r.pump(p.stdout, sink, outDone)
	go r.pump(p.stderr, tail, errDone)

	res := &Result{Argv: make([]string, len(inv.Argv))}
	for i, a := range inv.Argv {
		res.Argv[i] = r.Redact(a)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var cancelled error
	select {
	case <-p.leaderDone:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		cancelled = ctx.Err()
	case <-sink.stop:
	}
	grace := r.killGrace()
	p.stop(grace)
	awaitReaders(grace, []*os.File{p.stdout, p.stderr}, outDone, errDone)
	res.Duration = time.Since(p.started)

	ex := p.exit()
	res.fill(ex, inv)
	res.Truncated, res.CutBytes = sink.cut > 0, sink.cut
	res.OutputBytes = sink.kept + sink.cut
	res.StderrTail = r.Redactor().Cut(string(tail.Bytes()), tail.total > int64(len(tail.Bytes())), false)
	reasons := failureReasons(res, ex, sink, cancelled, timeout, limit)
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
		res.Stdout = []byte(r.Redactor().Cut(stdout.String(), false, res.Truncated))
		r.parseOutput(inv, res, stdout.Bytes())
	}
	// After write_to's commit, whose failure fails the call too.
	if removed := p.created.settle(len(reasons) > 0); len(removed) > 0 {
		reasons = append(reasons, fmt.Sprintf("%s, created for this call, was removed", strings.Join(removed, ", ")))
	}
	res.Err = r.Redact(joinReasons(reasons...))
	return res, nil
}

// failureReasons lists why a finished run did not succeed, in the order
// an operator should read them; none means success.
func failureReasons(res *Result, ex exitInfo, sink *cappedSink, cancelled error, timeout time.Duration, limit int64) []string {
	var reasons []string
	switch {
	case cancelled != nil:
		reasons = append(reasons, fmt.Sprintf("cancelled (%v); the command and everything it started were stopped", cancelled))
	case res.TimedOut:
		reasons = append(reasons, fmt.Sprintf("timed out after %s; the command and everything it started were stopped (raise the pack's timeout or timeout_overrides if the command needs longer)", timeout))
	}
	if res.Truncated {
		reasons = append(reasons, fmt.Sprintf("output passed max_output (%d bytes) and the command was stopped; at least %d more bytes were cut (narrow the query, or raise the pack's max_output)", limit, res.CutBytes))
	}
	if sink.writeErr != nil {
		reasons = append(reasons, fmt.Sprintf("writing the output failed: %v", sink.writeErr))
	}
	switch {
	case ex.supervisorErr != "" || ex.startErr != nil:
		// The command's own status is unknown; said below.
	case ex.signal != 0:
		reasons = append(reasons, fmt.Sprintf("killed by signal %s", ex.signal))
	case res.ExitCode != 0:
		reasons = append(reasons, fmt.Sprintf("exit status %d", res.ExitCode))
	}
	if (ex.signal != 0 || res.ExitCode != 0) && res.MaxMemory > 0 && mentionsMemory(res.StderrTail) {
		reasons = append(reasons, fmt.Sprintf("the command ran out of memory under max_memory (%d bytes of address space per process); narrow the input, or raise the pack's max_memory or max_memory_overrides", res.MaxMemory))
	}
	if ex.startErr != nil {
		reasons = append(reasons, fmt.Sprintf("the program could not be run: %v", ex.startErr))
	}
	if ex.supervisorErr != "" {
		reasons = append(reasons, ex.supervisorErr)
	}
	return reasons
}

// mentionsMemory reports whether a failing command's stderr says it could
// not allocate memory, in the words jq, glibc, Rust, Go and Node use.
func mentionsMemory(stderr string) bool {
	s := strings.ToLower(stderr)
	for _, w := range []string{"cannot allocate", "out of memory", "memory allocation", "malloc", "enomem", "heap limit", "failed to reserve"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// parseOutput fills Structured and StructuredContent (or ParseNote and an
// unparsed StructuredContent) for parse: json commands that succeeded or
// were cut, from raw (the output before redaction: escapes in the JSON
// text can hide part of a credential, so values are redacted once decoded).
func (r *Runner) parseOutput(inv *Invocation, res *Result, raw []byte) {
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
	v, err := parseJSON(raw)
	if err != nil {
		res.ParseNote = r.Redact("output was not valid JSON; returned as text: " + err.Error())
		res.StructuredContent = unparsedObject(res.ParseNote)
		return
	}
	res.Structured = r.Redactor().Value(v)
	res.StructuredContent = StructuredObject(res.Structured)
}

// start launches inv contained (package contain: a session and, where
// one can be made, a cgroup of its own; max_memory in force before the
// program's first instruction) with stdin from /dev/null and its
// path_within arguments opened beneath their roots as descriptors 3 and
// up.
// Output goes to pipes the runner reads itself (not through exec's copying
// goroutines), so that waiting for the leader does not also wait for
// whatever else holds the pipes open.
func (r *Runner) start(path string, inv *Invocation) (*started, error) {
	env, dir, cleanup, err := sandbox(inv)
	if err != nil {
		return nil, err
	}
	if dir != inv.Dir && !filepath.IsAbs(path) {
		// A program named relative to the declared directory, run
		// elsewhere.
		path = filepath.Join(inv.Dir, path)
	}
	files, created, err := openBoundFiles(inv)
	if err != nil {
		cleanup()
		return nil, err
	}
	defer closeAll(files)
	sandboxCleanup := cleanup
	cleanup = func() { sandboxCleanup(); created.settle(true) } // until the command starts
	var ends []*os.File
	pipe := func() (rd, wr *os.File, err error) {
		if rd, wr, err = contain.ChildPipe(); err == nil {
			ends = append(ends, rd, wr)
		}
		return rd, wr, err
	}
	fail := func(err error) (*started, error) {
		closeAll(ends)
		cleanup()
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		return fail(err)
	}
	errR, errW, err := pipe()
	if err != nil {
		return fail(err)
	}
	cmd := &exec.Cmd{
		Path:       path,
		Args:       inv.Argv,
		Env:        env,
		Dir:        dir,
		Stdout:     outW,
		Stderr:     errW,
		ExtraFiles: files,
	}
	if null := r.devNull(); null != nil {
		cmd.Stdin = null
	}
	if r.Contain == nil {
		return fail(fmt.Errorf("the runner has no containment (build it with NewRunner)"))
	}
	p := &started{cmd: cmd, stdout: outR, stderr: errR, cleanup: sandboxCleanup, created: created}
	p.started = time.Now()
	p.tree, err = r.Contain.Start(cmd, inv.MaxMemory)
	// The child holds its ends now; the gateway keeps only its own.
	outW.Close()
	errW.Close()
	if err != nil {
		closeAll([]*os.File{outR, errR})
		cleanup()
		return nil, err
	}
	p.wait()
	return p, nil
}

// sandbox is the environment and directory inv runs with: as declared, or
// for a confined command (program text) HOME replaced by a fresh empty,
// read-only directory, which is also the working directory when EmptyDir.
// cleanup removes the directory.
func sandbox(inv *Invocation) (env []string, dir string, cleanup func(), err error) {
	if !inv.Confined {
		return inv.Env, inv.Dir, func() {}, nil
	}
	base := envValue(inv.Env, "TMPDIR")
	if base == "" || !filepath.IsAbs(base) {
		base = os.TempDir()
	}
	empty, err := os.MkdirTemp(base, "toolgate-empty-")
	if err != nil {
		return nil, "", nil, fmt.Errorf("creating the empty directory a program runs in: %w", err)
	}
	if err := os.Chmod(empty, 0o500); err != nil {
		os.Remove(empty)
		return nil, "", nil, err
	}
	env = make([]string, 0, len(inv.Env)+1)
	for _, kv := range inv.Env {
		if !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+empty)
	sort.Strings(env)
	dir = inv.Dir
	if inv.EmptyDir {
		dir = empty
	}
	return env, dir, func() { os.Remove(empty) }, nil
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
