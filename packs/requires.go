package packs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/toolgate/toolgate/workspace"
)

// VersionProbeTimeout bounds each `<binary> --version` run at load, so a
// binary that waits for input cannot hang the gateway's start.
const VersionProbeTimeout = 5 * time.Second

// versionProbeMaxOutput bounds what is read from a version probe; a banner
// is a line or two.
const versionProbeMaxOutput = 64 << 10

// probe is the outcome of running one binary with its version arguments.
type probe struct {
	path    string
	version *semver.Version
	err     error
}

// CheckRequires verifies every pack's `requires`: each binary is on PATH
// and, when a constraint is given, the version it prints satisfies it. All
// problems are returned at once, each at the requirement's position. Each
// distinct (binary, version arguments) pair is run once per call, however
// many packs name it.
func CheckRequires(ctx context.Context, ws *workspace.Workspace) workspace.ErrorList {
	var errs workspace.ErrorList
	probes := map[string]*probe{}
	for _, p := range ws.CommandPacks {
		if p == nil {
			continue
		}
		for _, req := range p.Requires {
			if req == nil {
				continue
			}
			if e := checkRequirement(ctx, p.ID, req, probes); e != nil {
				errs = append(errs, e)
			}
		}
	}
	return errs
}

func checkRequirement(ctx context.Context, packID string, req *workspace.Requirement, probes map[string]*probe) *workspace.Error {
	if req.Binary == "" {
		return workspace.Errorf(req.Pos, "pack %q: a requires entry has no binary; write {binary: NAME, version: \">=X.Y\"}", packID)
	}
	var constraint *semver.Constraints
	if req.Version != "" {
		c, err := semver.NewConstraint(req.Version)
		if err != nil {
			return workspace.Errorf(req.Pos, "pack %q: requires %s version %q is not a valid constraint (%v); write it like \">=1.6\", \"^2.20\" or \">=1.2, <2\"", packID, req.Binary, req.Version, err)
		}
		constraint = c
	}
	args := req.VersionArgs
	if len(args) == 0 {
		args = []string{"--version"}
	}
	if constraint == nil {
		if _, err := exec.LookPath(req.Binary); err != nil {
			return workspace.Errorf(req.Pos, "pack %q requires %s, which is not found on PATH; install it or add its directory to PATH", packID, req.Binary)
		}
		return nil
	}
	key := req.Binary + "\x00" + strings.Join(args, "\x00")
	pr, ok := probes[key]
	if !ok {
		pr = runProbe(ctx, req.Binary, args)
		probes[key] = pr
	}
	want := fmt.Sprintf("%s %s", req.Binary, req.Version)
	switch {
	case pr.path == "":
		return workspace.Errorf(req.Pos, "pack %q requires %s, but %s is not found on PATH; install %s or add its directory to PATH", packID, want, req.Binary, want)
	case pr.err != nil:
		return workspace.Errorf(req.Pos, "pack %q requires %s, but the version of %s could not be read: %v", packID, want, pr.path, pr.err)
	case !constraint.Check(pr.version):
		return workspace.Errorf(req.Pos, "pack %q requires %s, but %s is version %s, which does not satisfy %q; install a matching %s (or put one earlier on PATH), or change the constraint", packID, want, pr.path, pr.version, req.Version, req.Binary)
	}
	return nil
}

// runProbe locates binary and runs it with args under a short timeout, in
// its own process group with a clean environment, and parses the version it
// prints (stdout first, then stderr, where some tools print their banner).
func runProbe(ctx context.Context, binary string, args []string) *probe {
	path, err := exec.LookPath(binary)
	if err != nil {
		return &probe{}
	}
	pr := &probe{path: path}
	if err := ctx.Err(); err != nil {
		pr.err = fmt.Errorf("version check not run: %w", err)
		return pr
	}
	ctx, cancel := context.WithTimeout(ctx, VersionProbeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = baseEnv(os.Getenv)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &limitedWriter{w: &stdout, n: versionProbeMaxOutput}
	cmd.Stderr = &limitedWriter{w: &stderr, n: versionProbeMaxOutput}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	runErr := cmd.Run()
	invocation := strings.Join(append([]string{binary}, args...), " ")
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		pr.err = fmt.Errorf("%q did not finish within %s; set version_args to the flag that prints the version", invocation, VersionProbeTimeout)
		return pr
	}
	if v, err := ParseVersion(stdout.String()); err == nil {
		pr.version = v
		return pr
	}
	if v, err := ParseVersion(stderr.String()); err == nil {
		pr.version = v
		return pr
	}
	out := stdout.String()
	if strings.TrimSpace(out) == "" {
		out = stderr.String()
	}
	status := ""
	if runErr != nil {
		status = fmt.Sprintf(" (it ended with: %v)", runErr)
	}
	pr.err = fmt.Errorf("%q printed no version number (x.y or x.y.z)%s; first line: %q; set version_args to the flag that prints the version, or drop the version constraint", invocation, status, firstLine(out, 80))
	return pr
}

// limitedWriter keeps the first n bytes written and discards the rest
// while reporting success, so a chatty program is neither stored whole nor
// killed by a broken pipe.
type limitedWriter struct {
	w *bytes.Buffer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if room := l.n - l.w.Len(); room > 0 {
		l.w.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
