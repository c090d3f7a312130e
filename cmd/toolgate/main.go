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
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

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
		{"packs", "list the bundled command packs, or show one, and whether they run here", runPacks},
		{"version", "print the toolgate version", runVersion},
	}
}

func main() {
	superviseIfAsked()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	c := &cli{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	code := c.main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// main parses the global flags, sets up logging and dispatches.
func (c *cli) main(ctx context.Context, args []string) int {
	fs := pflag.NewFlagSet("toolgate", pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.SetInterspersed(false)
	logFormat := fs.String("log-format", "text", "log format: text or json")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.Usage = func() { c.usage() }
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return exitOK
		}
		fmt.Fprintf(c.stderr, "toolgate: %v\n", err)
		return exitUsage
	}
	logger, err := newLogger(c.stderr, *logFormat, *logLevel)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate: %v\n", err)
		return exitUsage
	}
	c.log = logger
	rest := fs.Args()
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
	fmt.Fprintf(c.stderr, "toolgate governs what AI coding agents may do.\n\nUsage: toolgate [--log-format text|json] [--log-level LEVEL] COMMAND [flags]\n\nCommands:\n")
	for _, s := range subcommands() {
		fmt.Fprintf(c.stderr, "  %-10s %s\n", s.name, s.short)
	}
	fmt.Fprintf(c.stderr, "\nRun `toolgate COMMAND --help` for a command's flags.\n")
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	switch strings.ToLower(format) {
	case "json":
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})), nil
	case "text", "":
		return slog.New(tint.NewHandler(w, &tint.Options{Level: lvl, NoColor: !isTerminal(w)})), nil
	}
	return nil, fmt.Errorf("--log-format %q: use text or json", format)
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// flagSet returns a subcommand's flag set that prints usage to stderr and
// reports parse errors as usage errors.
func (c *cli) flagSet(name, usage string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(c.stderr)
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

// workspacePath applies the default: -w, else $TOOLGATE_WORKSPACE, else
// ./toolgate.yaml.
func (c *cli) workspacePath(flag string) string {
	if flag != "" {
		return flag
	}
	if env := c.getenv("TOOLGATE_WORKSPACE"); env != "" {
		return env
	}
	return "toolgate.yaml"
}

func runVersion(_ context.Context, c *cli, args []string) int {
	fs := c.flagSet("version", "version")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fmt.Fprintf(c.stdout, "toolgate %s\n", version)
	return exitOK
}
