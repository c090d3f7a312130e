package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/workspace"
)

const auditUsage = `Usage: toolgate audit verify [FILE] [-w WORKSPACE] [--dsn-env NAME] [--head SEQ:HASH] [--public-key FILE [--previous-key FILE]...] [--allow-unsigned-tail]
       toolgate audit tail [FILE] [-w WORKSPACE] [--dsn-env NAME] [-f] [--agent ID] [--decision D] [-n N] [--format text|json]
       toolgate audit export [FILE] [-w WORKSPACE] [--dsn-env NAME] [--after SEQ]
       toolgate audit keygen [--private FILE] [--public FILE]

  verify  check the hash chain: every line intact, nothing removed or reordered;
          with --public-key also the signed checkpoints (truncation, a chain
          rewritten from scratch; --previous-key accepts checkpoints of a key
          rotated out, while the chain must still end signed by --public-key);
          with --head SEQ:HASH (a head anchored outside toolgate: the gateway
          logs it as "audit chain head" and exports toolgate_audit_anchor_info)
          the chain must still hold that event with that hash, which catches a
          cut tail and a rewrite without any key; lists allowed calls with no
          outcome event
  tail    print the last events, optionally filtered, and follow new ones with -f
  export  write the chain as JSONL to stdout (verifiable with audit verify FILE)
  keygen  make an ed25519 key pair for gateway.audit.signing_key (PEM; the
          same as openssl genpkey -algorithm ed25519 and openssl pkey -pubout)

The chain is FILE, else the PostgreSQL chain of the DSN in $NAME (--dsn-env),
else the workspace's store (workspace from -w, $TOOLGATE_WORKSPACE or
./toolgate.yaml): its gateway.state.postgres chain, or its gateway.audit.path
file; else ./audit.jsonl.
`

func runAudit(ctx context.Context, c *cli, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stderr, auditUsage)
		return exitUsage
	}
	switch args[0] {
	case "verify":
		return runAuditVerify(ctx, c, args[1:])
	case "tail":
		return runAuditTail(ctx, c, args[1:])
	case "export":
		return runAuditExport(ctx, c, args[1:])
	case "keygen":
		return runAuditKeygen(c, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(c.stderr, auditUsage)
		return exitOK
	}
	fmt.Fprintf(c.stderr, "toolgate audit: unknown subcommand %q\n\n%s", args[0], auditUsage)
	return exitUsage
}

// auditSource is the chain a subcommand reads: a file, or a PostgreSQL
// store (closed by the caller).
type auditSource struct {
	path string
	pg   *state.Postgres
}

func (s auditSource) String() string {
	if s.pg != nil {
		return s.pg.Describe()
	}
	return s.path
}

func (s auditSource) close() {
	if s.pg != nil {
		s.pg.Close()
	}
}

// sourceFlags are the flags that pick the chain.
type sourceFlags struct {
	ws, dsnEnv *string
}

func addSourceFlags(fs *pflag.FlagSet) sourceFlags {
	return sourceFlags{
		ws:     fs.StringP("workspace", "w", "", "workspace whose store (gateway.state, gateway.audit.path) to read"),
		dsnEnv: fs.String("dsn-env", "", "read the PostgreSQL chain of the DSN in this environment variable"),
	}
}

func runAuditVerify(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("audit verify", "audit verify [FILE] [-w WORKSPACE] [--dsn-env NAME] [--head SEQ:HASH] [--public-key FILE]")
	src := addSourceFlags(fs)
	head := fs.String("head", "", "SEQ:HASH of a head anchored outside toolgate: refuse a chain that no longer holds that event with that hash")
	pubFile := fs.String("public-key", "", "PEM ed25519 public key: require checkpoints signed by it")
	allowTail := fs.Bool("allow-unsigned-tail", false, "with --public-key, accept events after the last checkpoint (a log a gateway is writing now)")
	previous := fs.StringArray("previous-key", nil, "with --public-key, a PEM public key rotated out whose checkpoints are accepted too (repeatable)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if len(*previous) > 0 && *pubFile == "" {
		fmt.Fprintln(c.stderr, "toolgate audit verify: --previous-key needs --public-key (the key signing now)")
		return exitUsage
	}
	var opts audit.VerifyOptions
	if *head != "" {
		a, err := audit.ParseAnchor(*head)
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate audit verify: --head: %v\n", err)
			return exitUsage
		}
		opts.Head = &a
	}
	if *pubFile != "" {
		data, err := os.ReadFile(*pubFile)
		if err == nil {
			opts.PublicKey, err = audit.ParsePublicKey(data)
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate audit verify: --public-key %s: %v\n", *pubFile, err)
			return exitUsage
		}
		opts.AllowUnsignedTail = *allowTail
		for _, f := range *previous {
			data, err := os.ReadFile(f)
			var k ed25519.PublicKey
			if err == nil {
				k, err = audit.ParsePublicKey(data)
			}
			if err != nil {
				fmt.Fprintf(c.stderr, "toolgate audit verify: --previous-key %s: %v\n", f, err)
				return exitUsage
			}
			opts.PreviousKeys = append(opts.PreviousKeys, k)
		}
	}
	source, code := c.auditSource(ctx, "audit verify", fs, src)
	if code != exitOK {
		return code
	}
	defer source.close()
	var rep audit.Report
	var err error
	if source.pg != nil {
		rep, err = source.pg.VerifyChain(ctx, opts)
	} else {
		rep, err = audit.VerifyFileWith(source.path, opts)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate audit verify: %s: %v\n", source, err)
		if ve, ok := audit.AsVerifyError(err); ok && ve.Problem == audit.ProblemTruncated {
			fmt.Fprintf(c.stderr, "The gateway moves a torn last line aside (to %s%s) by itself when it next opens the log; to do it by hand, keep a copy and: truncate -s %d %s\n",
				source.path, audit.TornSuffix, ve.Offset, source.path)
		}
		return exitFail
	}
	last := rep.LastHash
	if last == "" {
		last = "(none: the log is empty)"
	}
	fmt.Fprintf(c.stdout, "ok: %d events, chain intact, last hash %s\n", rep.Events, last)
	printAnchored(c, opts, rep)
	if opts.PublicKey != nil {
		fmt.Fprintf(c.stdout, "signed: %d checkpoints by %s, through seq %d", rep.Checkpoints, audit.KeyID(opts.PublicKey), rep.SignedSeq)
		if rep.UnsignedTail > 0 {
			fmt.Fprintf(c.stdout, "; %d events after it not yet signed", rep.UnsignedTail)
		}
		if rep.PreviousKeyCheckpoints > 0 {
			fmt.Fprintf(c.stdout, "; %d earlier checkpoints by previous keys", rep.PreviousKeyCheckpoints)
		}
		fmt.Fprintln(c.stdout)
	}
	if n := len(rep.Unfinished); n > 0 {
		fmt.Fprintf(c.stdout, "finding: %d allowed calls have no outcome event (the gateway stopped during the call, or the call is still running):\n", n)
		for i, u := range rep.Unfinished {
			if i == 20 {
				fmt.Fprintf(c.stdout, "  … and %d more\n", n-i)
				break
			}
			fmt.Fprintf(c.stdout, "  seq %d %s %s %s\n", u.Seq, u.Time, printable(u.Agent), printable(u.Action))
		}
	}
	return exitOK
}

func runAuditTail(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("audit tail", "audit tail [FILE] [-w WORKSPACE] [--dsn-env NAME] [-f] [--agent ID] [--decision D] [-n N] [--format text|json]")
	src := addSourceFlags(fs)
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
	source, code := c.auditSource(ctx, "audit tail", fs, src)
	if code != exitOK {
		return code
	}
	defer source.close()
	opts := audit.TailOptions{
		Filter: audit.Filter{Agent: *agent, Decision: *decision},
		Last:   *last,
		Follow: *follow,
	}
	emit := func(r audit.Record) error {
		var err error
		if *format == "json" {
			_, err = fmt.Fprintf(c.stdout, "%s\n", r.Raw)
		} else {
			_, err = fmt.Fprintln(c.stdout, eventLine(&r.Event))
		}
		return err
	}
	var err error
	if source.pg != nil {
		err = source.pg.TailChain(ctx, opts, emit)
	} else {
		err = audit.Tail(ctx, source.path, opts, emit)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate audit tail: %v\n", err)
		return exitFail
	}
	return exitOK
}

func runAuditExport(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("audit export", "audit export [FILE] [-w WORKSPACE] [--dsn-env NAME] [--after SEQ]")
	src := addSourceFlags(fs)
	after := fs.Int64("after", 0, "export only events with a seq above this")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	source, code := c.auditSource(ctx, "audit export", fs, src)
	if code != exitOK {
		return code
	}
	defer source.close()
	var err error
	if source.pg != nil {
		_, err = source.pg.Export(ctx, c.stdout, *after)
	} else {
		err = audit.Tail(ctx, source.path, audit.TailOptions{}, func(r audit.Record) error {
			if r.Event.Seq <= *after {
				return nil
			}
			_, err := fmt.Fprintf(c.stdout, "%s\n", r.Raw)
			return err
		})
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate audit export: %s: %v\n", source, err)
		return exitFail
	}
	return exitOK
}

func runAuditKeygen(c *cli, args []string) int {
	fs := c.flagSet("audit keygen", "audit keygen [--private FILE] [--public FILE]")
	privPath := fs.String("private", "audit-signing.key", "where to write the private key (mode 0600; point gateway.audit.signing_key {file: …} at it)")
	pubPath := fs.String("public", "audit-signing.pub", "where to write the public key (for audit verify --public-key)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "toolgate audit keygen: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	priv, pub, err := audit.GenerateKeyPair()
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate audit keygen: %v\n", err)
		return exitFail
	}
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{*privPath, priv, 0o600}, {*pubPath, pub, 0o644}} {
		fh, err := os.OpenFile(f.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
		if err == nil {
			_, err = fh.Write(f.data)
			err = errors.Join(err, fh.Close())
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate audit keygen: %v (an existing key is never overwritten)\n", err)
			return exitFail
		}
	}
	fmt.Fprintf(c.stdout, "wrote %s (private: set gateway.audit.signing_key: {file: %s}) and %s (public: toolgate audit verify --public-key %s)\n",
		*privPath, *privPath, *pubPath, *pubPath)
	return exitOK
}

// auditSource picks the chain a subcommand works on: FILE; else the
// PostgreSQL chain of $NAME (--dsn-env); else the workspace's store from
// -w, $TOOLGATE_WORKSPACE or an existing ./toolgate.yaml (its PostgreSQL
// chain, or its gateway.audit.path); else ./audit.jsonl.
func (c *cli) auditSource(ctx context.Context, cmd string, fs *pflag.FlagSet, f sourceFlags) (auditSource, int) {
	wsFlag, dsnEnv := *f.ws, *f.dsnEnv
	switch {
	case fs.NArg() > 1:
		fmt.Fprintf(c.stderr, "toolgate %s: one FILE at most, got %q\n", cmd, fs.Args())
		return auditSource{}, exitUsage
	case fs.NArg() == 1 && (wsFlag != "" || dsnEnv != ""):
		fmt.Fprintf(c.stderr, "toolgate %s: give FILE, -w WORKSPACE or --dsn-env NAME, not both\n", cmd)
		return auditSource{}, exitUsage
	case fs.NArg() == 1:
		return auditSource{path: fs.Arg(0)}, exitOK
	case dsnEnv != "":
		dsn := c.getenv(dsnEnv)
		if dsn == "" {
			fmt.Fprintf(c.stderr, "toolgate %s: --dsn-env %s: the environment variable is empty or unset\n", cmd, dsnEnv)
			return auditSource{}, exitUsage
		}
		return c.openPGSource(ctx, cmd, dsn)
	}
	wsPath := c.workspacePath(wsFlag)
	if wsFlag == "" && c.workspace == "" && c.getenv("TOOLGATE_WORKSPACE") == "" {
		if _, err := os.Stat(wsPath); errors.Is(err, os.ErrNotExist) {
			return auditSource{path: audit.DefaultFile}, exitOK
		}
	}
	ws, err := workspace.Load(wsPath)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: %v\n(to skip the workspace, name the log: toolgate %s FILE)\n", cmd, err, cmd)
		return auditSource{}, exitFail
	}
	if pg := ws.Gateway.State.Postgres; pg != nil && pg.DSN != nil {
		dsn, err := pg.DSN.Resolve(c.getenv)
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate %s: gateway.state.postgres.dsn: %v\n", cmd, err)
			return auditSource{}, exitFail
		}
		return c.openPGSource(ctx, cmd, dsn)
	}
	return auditSource{path: gateway.AuditPath(ws)}, exitOK
}

func (c *cli) openPGSource(ctx context.Context, cmd, dsn string) (auditSource, int) {
	pg, err := state.OpenPostgres(ctx, dsn)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: %v\n", cmd, err)
		return auditSource{}, exitFail
	}
	return auditSource{pg: pg}, exitOK
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

// printAnchored says what the verification could not prove: without a
// public key a chain cut at its end, or rewritten from scratch, verifies
// like the real one; an anchored head covers the chain up to it.
func printAnchored(c *cli, opts audit.VerifyOptions, rep audit.Report) {
	if rep.Events > 0 {
		fmt.Fprintf(c.stdout, "head: %d:%s (anchor it outside toolgate; check it later with --head %d:%s)\n", rep.LastSeq, rep.LastHash, rep.LastSeq, rep.LastHash)
	}
	if opts.Head != nil {
		fmt.Fprintf(c.stdout, "anchored: the chain holds seq %d with the anchored hash", opts.Head.Seq)
		if rep.AfterAnchor > 0 {
			fmt.Fprintf(c.stdout, "; the %d events after it are not covered by the anchor", rep.AfterAnchor)
		}
		fmt.Fprintln(c.stdout)
	}
	if opts.PublicKey != nil {
		return
	}
	switch {
	case opts.Head != nil:
		fmt.Fprintln(c.stdout, "not signed: events after the anchored head could have been cut or rewritten undetectably; sign the chain (gateway.audit.signing_key, `toolgate audit keygen`) and verify with --public-key")
	default:
		fmt.Fprintln(c.stdout, "not proven: without a signing key this check cannot detect a truncated or rewritten tail (last events dropped, the file cut short, or the whole chain rewritten from scratch all verify as ok); anchor the head above outside toolgate and pass --head, or sign the chain (gateway.audit.signing_key, `toolgate audit keygen`) and verify with --public-key")
	}
}
