package packs

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/workspace"
)

// Built-in bounds for packs that declare none, so an undeclared pack is
// still bounded. Both are chosen from measurements of every bundled read
// command on real inputs (docs/limits.md; go run ./scripts/measure-limits).
const (
	// DefaultTimeout bounds a command whose pack declares no timeout: ten
	// times the slowest measured read (2.1 s), rounded up to 10 s.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxOutput bounds stdout of a command whose pack declares no
	// max_output: the smallest power of two holding every measured read
	// whose size the pack bounds (largest 447 KB); whole-history diffs and
	// whole-file dumps are cut, with a message to narrow the call.
	DefaultMaxOutput int64 = 512 << 10
	// DefaultKillGrace is how long a process group has between SIGTERM and
	// SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// DefaultMaxMemory bounds each process of a command whose pack
	// declares no max_memory, as address space (RLIMIT_AS): five times the
	// largest floor measured for the runtimes packs run (a Go CLI such as
	// gh needs 759 MiB of address space just to start, Node 711 MiB),
	// rounded up to a power of two (docs/limits.md). Packs that know their
	// program declare less: json-tools (jq) 512 MiB.
	DefaultMaxMemory int64 = 4 << 30
	// StderrTailBytes is how much of the end of stderr a Result keeps: the
	// end of stderr is where a failing program says why.
	StderrTailBytes = 8 << 10
)

// baseEnvVars are the only variables a command inherits from the gateway;
// everything else it gets is declared in the pack's env.
var baseEnvVars = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// Runner prepares and runs pack commands. Credentials and Getenv are the
// only ways values from the gateway's world reach a command, so what a
// command sees is decided here. Build it with NewRunner; after the first use
// its fields must not change.
type Runner struct {
	// Credentials holds resolved credential values by name, for
	// {credential.<name>} in pack env, and for redaction.
	Credentials map[string]string
	// Getenv supplies PATH, HOME, LANG and TMPDIR for commands.
	Getenv func(string) string
	// DefaultTimeout applies when a pack declares no timeout.
	DefaultTimeout time.Duration
	// DefaultMaxOutput applies when a pack declares no max_output.
	DefaultMaxOutput int64
	// KillGrace is the wait between SIGTERM and SIGKILL of a process group.
	KillGrace time.Duration
	// DefaultMaxMemory applies when a pack declares no max_memory.
	DefaultMaxMemory int64
	// Contain starts every command contained and stops its whole tree
	// (package contain). NewRunner sets it; the gateway shares it with the
	// stdio servers it starts, since in session mode one Manager must know
	// every child of the process.
	Contain *contain.Manager
	// BaseDir is where commands without a cwd run, and what a relative cwd
	// is resolved against: the workspace file's directory, so commands and
	// path_within constraints agree on what a relative path means.
	BaseDir string

	once sync.Once
	rd   *redact.Redactor
	// chunks are the read buffers of the output pumps (readChunk bytes).
	chunks sync.Pool
	// null is the /dev/null every command's stdin reads, opened once.
	nullOnce sync.Once
	null     *os.File
}

// devNull is the runner's /dev/null for commands' stdin (nil if it cannot
// be opened: os/exec then opens one per command). One open file serves
// every command: reading /dev/null has no state to share.
func (r *Runner) devNull() *os.File {
	r.nullOnce.Do(func() {
		if f, err := os.Open(os.DevNull); err == nil {
			r.null = f
		}
	})
	return r.null
}

// NewRunner returns a Runner with the built-in defaults and its redactor
// built from credentials.
func NewRunner(credentials map[string]string, getenv func(string) string) *Runner {
	r := &Runner{
		Credentials:      credentials,
		Getenv:           getenv,
		DefaultTimeout:   DefaultTimeout,
		DefaultMaxOutput: DefaultMaxOutput,
		DefaultMaxMemory: DefaultMaxMemory,
		KillGrace:        DefaultKillGrace,
	}
	// The mode can be forced for diagnosis (docs/security.md); a bad
	// value fails the first command with a message saying so.
	mode := contain.Mode(getenvOr(getenv, containmentEnv))
	// A test binary's other children would be taken for orphans.
	r.Contain = contain.New(contain.Options{Mode: mode, Subreaper: !testing.Testing()})
	r.Redactor()
	return r
}

// containmentEnv names the variable that forces a containment mode
// (cgroup or session) instead of choosing one.
const containmentEnv = "TOOLGATE_CONTAINMENT"

func getenvOr(getenv func(string) string, key string) string {
	if getenv == nil {
		return ""
	}
	return getenv(key)
}

// Close stops the runner's containment watcher (which kills whatever is
// still contained). Stop every run and job first.
func (r *Runner) Close() error {
	if r.null != nil {
		r.null.Close()
	}
	if r.Contain == nil {
		return nil
	}
	return r.Contain.Close()
}

// Redact replaces every credential value in s by [REDACTED:<name>], in
// every form package redact knows. The audit writer uses it on anything
// derived from a call.
func (r *Runner) Redact(s string) string {
	return r.Redactor().Redact(s)
}

// Redactor is the redactor of the runner's credentials, compiled once:
// the gateway redacts everything else it passes on with it too.
func (r *Runner) Redactor() *redact.Redactor {
	r.once.Do(func() { r.rd = redact.New(r.Credentials) })
	return r.rd
}

// Invocation is a fully resolved command, ready to run: everything Run
// needs, and nothing taken from the gateway's environment later.
type Invocation struct {
	// Pack and Command identify the declaration, for messages.
	Pack, Command string
	// Argv is the program and its arguments, unredacted (Result.Argv is the
	// redacted copy).
	Argv []string
	// ArgvNamed is Argv with each bound descriptor (/dev/fd/N) written as
	// the path the caller named: what an approver should be shown. Equal to
	// Argv when nothing is bound.
	ArgvNamed []string
	// Env is the complete environment, KEY=VALUE. It holds credential
	// values: never log it.
	Env []string
	// Dir is the working directory; "" inherits the gateway's.
	Dir string
	// Timeout, MaxOutput and MaxMemory bound the run (resolved; never
	// zero from Prepare). MaxMemory is bytes of address space per process.
	Timeout   time.Duration
	MaxOutput int64
	MaxMemory int64
	// Parse is "json" when stdout should be returned as structured data.
	Parse string
	// WriteTo is the file stdout atomically replaces on success; "" for none.
	WriteTo string
	// WriteRoot is the resolved root WriteTo is bound beneath (its
	// template names a path_within parameter); "" for none.
	WriteRoot string
	// Bound are the path_within arguments: Run opens each beneath its root
	// just before the command starts and passes it as descriptor FD
	// (Bound[i].FD is 3+i); argv already names them /dev/fd/FD.
	Bound []BoundPath
	// Confined is set for a command taking program text (program:): it
	// runs with HOME set to a fresh empty directory, and, when EmptyDir,
	// in that directory too (no argument needs the declared one).
	Confined, EmptyDir bool
}

// Prepare resolves a call to cmd of pack with args into an Invocation:
// argv by BuildArgv, a clean environment plus the pack's env with
// credentials filled in, the working directory, and the timeout and output
// bounds (the command's override, else the pack's, else the built-in).
func (r *Runner) Prepare(pack *workspace.CommandPack, cmd *workspace.Command, args map[string]any) (*Invocation, error) {
	return r.PrepareBound(pack, cmd, args, nil)
}

// PrepareBound is Prepare for a call whose matched grant binds parameters
// with path_within: roots maps each such parameter to its resolved root
// (grantcheck's Policy.PathRoots). Each bound argument (or each item of a
// bound list) must lead beneath its root now, and the command will get it
// as an open descriptor, /dev/fd/N, opened by Run beneath the root: the
// name the grant checked is the file the command reads (docs/packs.md). A
// bound placeholder must be a whole argv element or stand last after
// literal text (workspace.MisplacedBounds), else the call is refused. A
// missing file of a parameter the command lists under creates: is created
// by Run beneath the root. A write_to naming a bound parameter is created
// beneath the same root.
func (r *Runner) PrepareBound(pack *workspace.CommandPack, cmd *workspace.Command, args map[string]any, roots map[string]string) (*Invocation, error) {
	name := pack.ID + ":" + cmd.ID
	if len(roots) > 0 {
		// The loader refuses these layouts; a command built by code, or a
		// binding the loader did not see, is refused here, on every call.
		bad := workspace.MisplacedBounds(cmd, "bound by path_within", func(p string) bool { _, ok := roots[p]; return ok })
		if len(bad) > 0 {
			return nil, fmt.Errorf("command %s: %w", name, bad[0])
		}
	}
	dir := r.dir(pack, cmd)
	bound, argvArgs, err := bindPaths(cmd, args, roots, dir)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	conf, err := confinedProgram(cmd)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	if conf != nil {
		if err := checkPrograms(conf, cmd, args); err != nil {
			return nil, fmt.Errorf("command %s: %w", name, err)
		}
	}
	argv, err := BuildArgv(cmd, argvArgs)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	named := argv
	if len(bound) > 0 {
		// Only for people: the values were checked as paths, not as argv.
		if named, err = BuildArgv(cmd, args); err != nil {
			named = argv
		}
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, fmt.Errorf("command %s: argv has no program; the pack's argv must start with a literal program name", name)
	}
	env, err := r.env(pack)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
	}
	inv := &Invocation{
		Pack: pack.ID, Command: cmd.ID,
		Argv: argv, ArgvNamed: named, Env: env,
		Dir:       dir,
		Timeout:   r.timeout(pack, cmd),
		MaxOutput: r.maxOutput(pack),
		MaxMemory: r.maxMemory(pack, cmd),
		Parse:     cmd.Output.Parse,
		Bound:     bound,
		Confined:  conf != nil,
		EmptyDir:  conf != nil && !needsDeclaredDir(cmd, argvArgs),
	}
	if cmd.Output.WriteTo != "" {
		target, err := fillPath(cmd.Output.WriteTo, args)
		if err != nil {
			return nil, fmt.Errorf("command %s: output.write_to: %w", name, err)
		}
		if target == "" {
			return nil, fmt.Errorf("command %s: output.write_to names an empty path; pass a file name", name)
		}
		root, err := writeRoot(cmd.Output.WriteTo, roots)
		if err != nil {
			return nil, fmt.Errorf("command %s: output.write_to: %w", name, err)
		}
		switch {
		case root != "":
			// Not cleaned: ".." applies to what the name resolves to, as
			// in the grant checker.
			target = absUncleaned(dir, target)
			if _, err := relBeneath(root, target); err != nil {
				return nil, fmt.Errorf("command %s: output.write_to %q %w", name, target, err)
			}
		case !filepath.IsAbs(target) && inv.Dir != "":
			target = filepath.Join(inv.Dir, target)
		}
		inv.WriteTo, inv.WriteRoot = target, root
	}
	return inv, nil
}

// dir is where cmd runs: its cwd, else the pack's, else BaseDir; relative
// to BaseDir.
func (r *Runner) dir(pack *workspace.CommandPack, cmd *workspace.Command) string {
	d := cmd.Cwd
	if d == "" {
		d = pack.Cwd
	}
	switch {
	case d == "":
		return r.BaseDir
	case !filepath.IsAbs(d) && r.BaseDir != "":
		return filepath.Join(r.BaseDir, d)
	}
	return d
}

func (r *Runner) timeout(pack *workspace.CommandPack, cmd *workspace.Command) time.Duration {
	if d, ok := pack.TimeoutOverrides[cmd.ID]; ok && d > 0 {
		return d.D()
	}
	if pack.Timeout > 0 {
		return pack.Timeout.D()
	}
	if r.DefaultTimeout > 0 {
		return r.DefaultTimeout
	}
	return DefaultTimeout
}

func (r *Runner) maxOutput(pack *workspace.CommandPack) int64 {
	if pack.MaxOutput > 0 {
		return int64(pack.MaxOutput)
	}
	if r.DefaultMaxOutput > 0 {
		return r.DefaultMaxOutput
	}
	return DefaultMaxOutput
}

func (r *Runner) maxMemory(pack *workspace.CommandPack, cmd *workspace.Command) int64 {
	if m, ok := pack.MaxMemoryOverrides[cmd.ID]; ok && m > 0 {
		return int64(m)
	}
	if pack.MaxMemory > 0 {
		return int64(pack.MaxMemory)
	}
	if r.DefaultMaxMemory > 0 {
		return r.DefaultMaxMemory
	}
	return DefaultMaxMemory
}

func (r *Runner) killGrace() time.Duration {
	if r.KillGrace > 0 {
		return r.KillGrace
	}
	return DefaultKillGrace
}

// env is PATH, HOME, LANG and TMPDIR from Getenv, then the pack's env with
// {credential.<name>} filled in; the pack wins on a clash. Sorted, so an
// invocation is reproducible.
func (r *Runner) env(pack *workspace.CommandPack) ([]string, error) {
	getenv := r.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	vars := baseVars(getenv)
	for k, tmpl := range pack.Env {
		var b strings.Builder
		for _, seg := range workspace.ParseTemplate(tmpl) {
			if seg.Param == "" {
				b.WriteString(seg.Literal)
				continue
			}
			cred, ok := seg.IsCredential()
			if !ok {
				return nil, fmt.Errorf("env %s: placeholder {%s} is not allowed in env; only {credential.<name>} is", k, seg.Param)
			}
			v, ok := r.Credentials[cred]
			if !ok || v == "" {
				return nil, fmt.Errorf("env %s needs credential %q, which has no value; set the variable or file that its credentials: entry names", k, cred)
			}
			b.WriteString(v)
		}
		vars[k] = b.String()
	}
	return envList(vars), nil
}

// baseEnv is the clean environment alone, for programs run outside a pack
// (version probes).
func baseEnv(getenv func(string) string) []string {
	return envList(baseVars(getenv))
}

func baseVars(getenv func(string) string) map[string]string {
	vars := map[string]string{}
	for _, k := range baseEnvVars {
		if v := getenv(k); v != "" {
			vars[k] = v
		}
	}
	return vars
}

func envList(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
