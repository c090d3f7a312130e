package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/workspace"
)

const auditUsage = `Usage: toolgate audit verify [FILE] [-w WORKSPACE]
       toolgate audit tail [FILE] [-w WORKSPACE] [-f] [--agent ID] [--decision D] [-n N] [--format text|json]

  verify  check the hash chain: every line intact, nothing removed or reordered
  tail    print the last events, optionally filtered, and follow new ones with -f

FILE defaults to the workspace's gateway.audit.path (workspace from -w,
$TOOLGATE_WORKSPACE or ./toolgate.yaml), else ./audit.jsonl.
`

func runAudit(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, auditUsage)
		return exitUsage
	}
	switch args[0] {
	case "verify":
		return runAuditVerify(c, args[1:])
	case "tail":
		return runAuditTail(ctx, c, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(c.stderr, auditUsage)
		return exitOK
	}
	fmt.Fprintf(c.stderr, "toolgate audit: unknown subcommand %q\n\n%s", args[0], auditUsage)
	return exitUsage
}

func runAuditVerify(c *cli, args []string) int {
	fs := c.flagSet("audit verify", "audit verify [FILE] [-w WORKSPACE]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace whose gateway.audit.path to verify")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	path, code := c.auditFile("audit verify", fs, *wsFlag)
	if code != exitOK {
		return code
	}
	rep, err := audit.VerifyFile(path)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate audit verify: %s: %v\n", path, err)
		if ve, ok := audit.AsVerifyError(err); ok && ve.Problem == audit.ProblemTruncated {
			fmt.Fprintf(c.stderr, "To let the gateway append again, remove the partial line (keep a copy first): truncate -s %d %s\n", ve.Offset, path)
		}
		return exitFail
	}
	last := rep.LastHash
	if last == "" {
		last = "(none: the log is empty)"
	}
	fmt.Fprintf(c.stdout, "ok: %d events, chain intact, last hash %s\n", rep.Events, last)
	return exitOK
}

func runAuditTail(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("audit tail", "audit tail [FILE] [-w WORKSPACE] [-f] [--agent ID] [--decision D] [-n N] [--format text|json]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace whose gateway.audit.path to read")
	follow := fs.BoolP("follow", "f", false, "keep printing new events until interrupted")
	agent := fs.String("agent", "", "only events of this agent")
	decision := fs.String("decision", "", "only events with this decision (allow, approval, deny, …)")
	last := fs.IntP("lines", "n", 10, "print the last N matching events already in the log; 0 prints all")
	format := fs.String("format", "text", "output format: text (one readable line per event) or json (the stored lines)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(c.stderr, "toolgate audit tail: --format %q: use text or json\n", *format)
		return exitUsage
	}
	if *last < 0 {
		fmt.Fprintf(c.stderr, "toolgate audit tail: -n %d: use a count of 0 (all) or more\n", *last)
		return exitUsage
	}
	path, code := c.auditFile("audit tail", fs, *wsFlag)
	if code != exitOK {
		return code
	}
	opts := audit.TailOptions{
		Filter: audit.Filter{Agent: *agent, Decision: *decision},
		Last:   *last,
		Follow: *follow,
	}
	err := audit.Tail(ctx, path, opts, func(r audit.Record) error {
		var err error
		if *format == "json" {
			_, err = fmt.Fprintf(c.stdout, "%s\n", r.Raw)
		} else {
			_, err = fmt.Fprintln(c.stdout, eventLine(&r.Event))
		}
		return err
	})
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate audit tail: %v\n", err)
		return exitFail
	}
	return exitOK
}

// auditFile picks the log a subcommand works on: FILE, else the audit path
// of the workspace from -w, $TOOLGATE_WORKSPACE or an existing
// ./toolgate.yaml, else ./audit.jsonl.
func (c *cli) auditFile(cmd string, fs *pflag.FlagSet, wsFlag string) (string, int) {
	switch {
	case fs.NArg() > 1:
		fmt.Fprintf(c.stderr, "toolgate %s: one FILE at most, got %q\n", cmd, fs.Args())
		return "", exitUsage
	case fs.NArg() == 1 && wsFlag != "":
		fmt.Fprintf(c.stderr, "toolgate %s: give FILE or -w WORKSPACE, not both\n", cmd)
		return "", exitUsage
	case fs.NArg() == 1:
		return fs.Arg(0), exitOK
	}
	wsPath := c.workspacePath(wsFlag)
	if wsFlag == "" && c.workspace == "" && c.getenv("TOOLGATE_WORKSPACE") == "" {
		if _, err := os.Stat(wsPath); errors.Is(err, os.ErrNotExist) {
			return audit.DefaultFile, exitOK
		}
	}
	ws, err := workspace.Load(wsPath)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: %v\n(to skip the workspace, name the log: toolgate %s FILE)\n", cmd, err, cmd)
		return "", exitFail
	}
	return gateway.AuditPath(ws), exitOK
}

// eventLine renders an event as one line for people: seq, time, agent,
// decision, action and reason, plus the error of a failed execution.
func eventLine(ev *audit.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s %s %s %s", ev.Seq, ev.Time.UTC().Format("2006-01-02T15:04:05.000Z"),
		printable(ev.Agent), printable(ev.Decision), printable(ev.Action))
	if ev.Reason != "" {
		fmt.Fprintf(&b, " — %s", printable(ev.Reason))
	}
	if ev.Error != "" {
		fmt.Fprintf(&b, " (error: %s)", printable(ev.Error))
	}
	return b.String()
}

// printable quotes a value that holds control or non-printing characters:
// tool names and reasons can come from downstream servers, and must not be
// able to drive the operator's terminal.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return s
	}
	return strconv.Quote(s)
}
