// Command toolgate is the gateway that governs what AI coding agents may do:
// it serves command packs and proxies MCP servers, deciding every call
// against the workspace's grants. Run `toolgate help` for the subcommands.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lmittmann/tint"
	"github.com/spf13/pflag"
	"golang.org/x/term"
)

// Exit codes shared by every subcommand.
const (
	exitOK    = 0
	exitFail  = 1 // the workspace or the operation failed
	exitUsage = 2 // the command line was wrong
)

// cli carries what a subcommand may touch, so tests run it in-process with
// their own streams and environment.
type cli struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	log            *slog.Logger

	// The global flags' state: accepted before the subcommand or after it
	// (every subcommand's flag set carries --log-level and --log-format), so
	// `toolgate serve --log-level debug` and `toolgate --log-level debug
	// serve` mean the same.
	level     *slog.LevelVar
	logFormat string
	workspace string // -w given before the subcommand; the subcommand's own -w wins

	// listServerTools enumerates proxied servers for `toolgate pin` and
	// `check`; nil is the live enumeration (see pin.go).
	listServerTools serverLister
}

type subcommand struct {
	name  string
	short string
	run   func(ctx context.Context, c *cli, args []string) int
}

func subcommands() []subcommand {
	return []subcommand{
		{"check", "validate a workspace and summarise what each agent may do", runCheck},
		{"explain", "decide one call without executing it, step by step", runExplain},
		{"policy", "run golden decision cases against a workspace (policy test)", runPolicy},
		{"serve", "run the gateway (daemon, per-agent HTTP, or stdio)", runServe},
		{"demo", "run the command-packs demo end to end and print a transcript", runDemo},
		{"audit", "verify or tail the hash-chained audit log", runAudit},
		{"mcp-config", "print a harness's MCP config (and Claude Code allowlist) for one agent", runMCPConfig},
		{"parity", "compare each harness allowlist with the agent's grant", runParity},
		{"approvals", "list, approve or deny calls waiting for an operator", runApprovals},
		{"pin", "pin tool definitions in toolgate.lock, or show what changed since", runPin},
		{"packs", "list the bundled command packs, or show one, and whether they run here", runPacks},
		{"init", "write a workspace (and its lock) from a live MCP server's tools", runInit},
		{"schema", "print the JSON Schema of toolgate.yaml, for editors", runSchema},
		{"version", "print the toolgate version", runVersion},
	}
}

func main() {
	superviseIfAsked()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	stopProfile := startCPUProfile(os.Getenv)
	code := c.main(ctx, os.Args[1:])
	stopProfile()
	stop()
	os.Exit(code)
}

// main parses the global flags, sets up logging and dispatches.
func (c *cli) main(ctx context.Context, args []string) int {
	c.level = new(slog.LevelVar)
	c.logFormat = "text"
	c.log = newLogger(c.stderr, c.logFormat, c.level)
	fs := pflag.NewFlagSet("toolgate", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.SetInterspersed(false)
	c.addGlobalFlags(fs)
	fs.StringVarP(&c.workspace, "workspace", "w", "", "workspace file for the subcommand (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	showVersion := fs.Bool("version", false, "print the version (as `toolgate version` does) and exit")
	fs.Usage = func() { c.usage() }
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(c.stderr, "toolgate: %v\n", err)
		return exitUsage
	}
	rest := fs.Args()
	if *showVersion {
		return runVersion(ctx, c, nil)
	}
	if len(rest) == 0 {
		c.usage()
		return exitUsage
	}
	name := rest[0]
	if name == "help" || name == "-h" || name == "--help" {
		if len(rest) > 1 {
			return c.dispatch(ctx, rest[1], []string{"--help"})
		}
		c.usage()
		return exitOK
	}
	// What a library logs through the standard log package (OpenTelemetry's
	// export errors) is written in the chosen format too, not as plain
	// text among JSON lines.
	slog.SetDefault(c.log)
	return c.dispatch(ctx, name, rest[1:])
}

func (c *cli) dispatch(ctx context.Context, name string, args []string) int {
	for _, s := range subcommands() {
		if s.name == name {
			return s.run(ctx, c, args)
		}
	}
	fmt.Fprintf(c.stderr, "toolgate: unknown command %q; run `toolgate help` for the list\n", name)
	return exitUsage
}

func (c *cli) usage() {
	fmt.Fprintf(c.stderr, "toolgate governs what AI coding agents may do.\n\nUsage: toolgate [--log-format text|json] [--log-level LEVEL] [-w WORKSPACE] COMMAND [flags]\n\nThe global flags --log-format and --log-level may also follow COMMAND.\n\nCommands:\n")
	for _, s := range subcommands() {
		fmt.Fprintf(c.stderr, "  %-10s %s\n", s.name, s.short)
	}
	fmt.Fprintf(c.stderr, "\nRun `toolgate COMMAND --help` for a command's flags.\n")
}

// addGlobalFlags puts the flags every command accepts on fs; each sets the
// cli's logger as it is parsed, so the last one given wins wherever it stood.
func (c *cli) addGlobalFlags(fs *pflag.FlagSet) {
	fs.Var(logLevelFlag{c}, "log-level", "log level: debug, info, warn or error")
	fs.Var(logFormatFlag{c}, "log-format", "log format: text or json")
}

// logLevelFlag is --log-level: it sets the shared level of the cli's logger.
type logLevelFlag struct{ c *cli }

func (f logLevelFlag) String() string {
	if f.c == nil || f.c.level == nil {
		return "info"
	}
	return strings.ToLower(f.c.level.Level().String())
}

func (f logLevelFlag) Set(v string) error {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(v)); err != nil {
		return fmt.Errorf("use debug, info, warn or error")
	}
	f.c.ensureLogger()
	f.c.level.Set(lvl)
	return nil
}

func (f logLevelFlag) Type() string { return "LEVEL" }

// logFormatFlag is --log-format: it rebuilds the cli's logger in that format.
type logFormatFlag struct{ c *cli }

func (f logFormatFlag) String() string {
	if f.c == nil || f.c.logFormat == "" {
		return "text"
	}
	return f.c.logFormat
}

func (f logFormatFlag) Set(v string) error {
	v = strings.ToLower(v)
	if v != "text" && v != "json" {
		return fmt.Errorf("use text or json")
	}
	f.c.ensureLogger()
	f.c.logFormat = v
	f.c.log = newLogger(f.c.stderr, v, f.c.level)
	return nil
}

func (f logFormatFlag) Type() string { return "FORMAT" }

// ensureLogger gives a cli built by a test without main a level to set.
func (c *cli) ensureLogger() {
	if c.level == nil {
		c.level = new(slog.LevelVar)
	}
}

// newLogger builds the logger for format (already validated: text or json).
func newLogger(w io.Writer, format string, level *slog.LevelVar) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, NoColor: !isTerminal(w)}))
}

// isTerminal reports whether w is a terminal, so log lines are coloured only
// for a person: a pipe, a file and a character device that is not a
// terminal (/dev/null) get plain text.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// flagSet returns a subcommand's flag set that prints usage to stderr and
// reports parse errors as usage errors.
func (c *cli) flagSet(name, usage string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	c.addGlobalFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(c.stderr, "Usage: toolgate %s\n\nFlags:\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parse parses flags; ok is false when the caller should return code.
// A bad flag is reported with the command's usage.
func parse(fs *pflag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return exitOK, false
		}
		fmt.Fprintf(fs.Output(), "toolgate %s: %v\n", fs.Name(), err)
		fs.Usage()
		return exitUsage, false
	}
	return 0, true
}

// workspacePath applies the default: the subcommand's -w, else a -w given
// before the subcommand, else $TOOLGATE_WORKSPACE, else ./toolgate.yaml.
func (c *cli) workspacePath(flag string) string {
	if flag != "" {
		return flag
	}
	if c.workspace != "" {
		return c.workspace
	}
	if env := c.getenv("TOOLGATE_WORKSPACE"); env != "" {
		return env
	}
	return "toolgate.yaml"
}
