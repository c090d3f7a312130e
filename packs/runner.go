package packs

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

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
	// StderrTailBytes is how much of the end of stderr a Result keeps: the
	// end of stderr is where a failing program says why.
	StderrTailBytes = 8 << 10
)

// minRedactLen is the shortest credential value that is redacted; shorter
// values ("1", "yes") would shred ordinary output without protecting much.
const minRedactLen = 4

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
	// BaseDir is where commands without a cwd run, and what a relative cwd
	// is resolved against: the workspace file's directory, so commands and
	// path_within constraints agree on what a relative path means.
	BaseDir string

	once     sync.Once
	redactor *strings.Replacer
}

// NewRunner returns a Runner with the built-in defaults and its redactor
// built from credentials.
func NewRunner(credentials map[string]string, getenv func(string) string) *Runner {
	r := &Runner{
		Credentials:      credentials,
		Getenv:           getenv,
		DefaultTimeout:   DefaultTimeout,
		DefaultMaxOutput: DefaultMaxOutput,
		KillGrace:        DefaultKillGrace,
	}
	r.replacer()
	return r
}

// Redact replaces every credential value in s by [REDACTED:<name>]. The
// audit writer uses it on anything derived from a call.
func (r *Runner) Redact(s string) string {
	return r.replacer().Replace(s)
}

// replacer builds, once, a single-pass replacer over all credential values,
// longest first so a value containing another is replaced whole.
func (r *Runner) replacer() *strings.Replacer {
	r.once.Do(func() {
		names := make([]string, 0, len(r.Credentials))
		for name, v := range r.Credentials {
			if len(v) >= minRedactLen {
				names = append(names, name)
			}
		}
		sort.Slice(names, func(i, j int) bool {
			a, b := r.Credentials[names[i]], r.Credentials[names[j]]
			if len(a) != len(b) {
				return len(a) > len(b)
			}
			return names[i] < names[j]
		})
		pairs := make([]string, 0, 2*len(names))
		for _, n := range names {
			pairs = append(pairs, r.Credentials[n], "[REDACTED:"+n+"]")
		}
		r.redactor = strings.NewReplacer(pairs...)
	})
	return r.redactor
}

// Invocation is a fully resolved command, ready to run: everything Run
// needs, and nothing taken from the gateway's environment later.
type Invocation struct {
	// Pack and Command identify the declaration, for messages.
	Pack, Command string
	// Argv is the program and its arguments, unredacted (Result.Argv is the
	// redacted copy).
	Argv []string
	// Env is the complete environment, KEY=VALUE. It holds credential
	// values: never log it.
	Env []string
	// Dir is the working directory; "" inherits the gateway's.
	Dir string
	// Timeout and MaxOutput bound the run (resolved; never zero from
	// Prepare).
	Timeout   time.Duration
	MaxOutput int64
	// Parse is "json" when stdout should be returned as structured data.
	Parse string
	// WriteTo is the file stdout atomically replaces on success; "" for none.
	WriteTo string
}

// Prepare resolves a call to cmd of pack with args into an Invocation:
// argv by BuildArgv, a clean environment plus the pack's env with
// credentials filled in, the working directory, and the timeout and output
// bounds (the command's override, else the pack's, else the built-in).
func (r *Runner) Prepare(pack *workspace.CommandPack, cmd *workspace.Command, args map[string]any) (*Invocation, error) {
	name := pack.ID + ":" + cmd.ID
	argv, err := BuildArgv(cmd, args)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", name, err)
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
		Argv: argv, Env: env,
		Dir:       cmd.Cwd,
		Timeout:   r.timeout(pack, cmd),
		MaxOutput: r.maxOutput(pack),
		Parse:     cmd.Output.Parse,
	}
	if inv.Dir == "" {
		inv.Dir = pack.Cwd
	}
	switch {
	case inv.Dir == "":
		inv.Dir = r.BaseDir
	case !filepath.IsAbs(inv.Dir) && r.BaseDir != "":
		inv.Dir = filepath.Join(r.BaseDir, inv.Dir)
	}
	if cmd.Output.WriteTo != "" {
		target, err := fillPath(cmd.Output.WriteTo, args)
		if err != nil {
			return nil, fmt.Errorf("command %s: output.write_to: %w", name, err)
		}
		if target == "" {
			return nil, fmt.Errorf("command %s: output.write_to names an empty path; pass a file name", name)
		}
		if !filepath.IsAbs(target) && inv.Dir != "" {
			target = filepath.Join(inv.Dir, target)
		}
		inv.WriteTo = target
	}
	return inv, nil
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
				return nil, fmt.Errorf("env %s needs credential %q, which has no value; set the variable or file it is declared from under credentials:", k, cred)
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
