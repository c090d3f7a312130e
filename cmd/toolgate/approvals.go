package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"

	"github.com/spf13/pflag"

	"github.com/toolgate/toolgate/admin"
	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/workspace"
)

const approvalsUsage = `Usage: toolgate approvals [--server URL | -w WORKSPACE] list [--format text|json]
       toolgate approvals [--server URL | -w WORKSPACE] approve ID [--for DURATION]
       toolgate approvals [--server URL | -w WORKSPACE] deny ID [--reason R] [--for DURATION]

  list     the calls waiting for a decision
  approve  let the identical call run once. With --for D, also let the same
           agent call the same tool under the same grant (other arguments
           too) without asking for D (at most 24h; not for strict tools)
  deny     refuse this request: the waiting call, and the agent's next
           identical call once, are told why; the identical call after
           that asks again. With --for D, the identical call is refused
           for D instead, without asking anyone

Like every command, it reads the workspace (-w, else $TOOLGATE_WORKSPACE,
else ./toolgate.yaml). When that workspace names its daemon
(gateway.listen), it talks to that daemon, with the admin token
gateway.admin_token says where to find ($` + admin.TokenEnv + ` wins when
set); otherwise it works on the workspace's store itself
(gateway.state: the .toolgate/ directory beside it, or its PostgreSQL),
which every toolgate process of the deployment shares — daemon,
per-agent and stdio instances alike — and records the decision in the
workspace's audit. Anyone who can write that store can approve calls:
its file permissions and database roles are the trust boundary.
-w WORKSPACE always works on the store. --server URL always talks to
that daemon. With no workspace at all it talks to ` + defaultServer + `.
`

// defaultServer is where `toolgate serve` listens unless told otherwise.
const defaultServer = "http://127.0.0.1:7330"

// adminTimeout bounds one admin API request.
const adminTimeout = 30 * time.Second

// daemonTarget is the daemon an approvals command talks to: its base URL
// and the workspace that named it (nil when none was read), whose
// gateway.admin_token says where the admin token is.
type daemonTarget struct {
	server string
	ws     *workspace.Workspace
}

func runApprovals(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("approvals", "approvals [--server URL | -w WORKSPACE] list|approve ID|deny ID")
	fs.SetInterspersed(false)
	server := fs.String("server", defaultServer, "the daemon's base URL")
	wsFlag := fs.StringP("workspace", "w", "", "work on this workspace's shared store directly instead of a daemon")
	fs.Usage = func() { fmt.Fprint(c.stderr, approvalsUsage) }
	if code, ok := parse(fs, args); !ok {
		return code
	}
	rest := fs.Args()
	if len(rest) == 0 {
		fmt.Fprint(c.stderr, approvalsUsage)
		return exitUsage
	}
	if rest[0] == "help" {
		fmt.Fprint(c.stderr, approvalsUsage)
		return exitOK
	}
	serverGiven := fs.Changed("server") || givesServer(rest[1:])
	if *wsFlag != "" {
		if serverGiven {
			fmt.Fprintln(c.stderr, "toolgate approvals: give --server URL or -w WORKSPACE, not both")
			return exitUsage
		}
		return runApprovalsStore(ctx, c, *wsFlag, rest)
	}
	target := daemonTarget{server: *server}
	ws, code := c.approvalsWorkspace()
	if code != exitOK {
		return code
	}
	if ws != nil {
		target.ws = ws
		if !serverGiven {
			if ws.Gateway.Listen == "" {
				return runApprovalsStoreOf(ctx, c, ws, rest)
			}
			target.server = listenURL(ws.Gateway.Listen)
		}
	}
	switch rest[0] {
	case "list":
		return runApprovalsList(ctx, c, target, rest[1:])
	case "approve":
		return runApprovalsDecide(ctx, c, target, "approve", rest[1:])
	case "deny":
		return runApprovalsDecide(ctx, c, target, "deny", rest[1:])
	}
	fmt.Fprintf(c.stderr, "toolgate approvals: unknown subcommand %q\n\n%s", rest[0], approvalsUsage)
	return exitUsage
}

// approvalsWorkspace reads the workspace every command reads: nil (and
// exitOK) when none was named and ./toolgate.yaml does not exist, so the
// command talks to the default daemon as it always did.
func (c *cli) approvalsWorkspace() (*workspace.Workspace, int) {
	path := c.workspacePath("")
	named := c.workspace != "" || c.getenv("TOOLGATE_WORKSPACE") != ""
	if !named {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, exitOK
		}
	}
	ws, err := workspace.Load(path)
	if err != nil {
		printLoadError(c, err)
		return nil, exitFail
	}
	return ws, exitOK
}

// givesServer reports whether a subcommand's arguments carry --server.
func givesServer(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--server" || strings.HasPrefix(a, "--server=") {
			return true
		}
	}
	return false
}

// listedArgsMax is how much of a request's arguments a text listing
// shows; `list --format json` has them whole.
const listedArgsMax = 160

// compactArgs is a request's arguments as one line for the text listing:
// the JSON compacted (the daemon's answer may be indented), shown once,
// not quoted again; a rune a terminal would act on (a control, a
// bidirectional override) is written as its JSON \u escape, which only
// strings can hold, so the line stays the same JSON; cut at
// listedArgsMax.
func compactArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "-"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return printable(string(raw))
	}
	var out strings.Builder
	n := 0
	for _, r := range b.String() {
		if n == listedArgsMax {
			out.WriteString("…")
			break
		}
		if unicode.IsPrint(r) {
			out.WriteRune(r)
		} else if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&out, "\\u%04x\\u%04x", r1, r2)
		} else {
			fmt.Fprintf(&out, "\\u%04x", r)
		}
		n++
	}
	return out.String()
}

// listed is one pending request as `list --format json` prints it.
type listed struct {
	ID        string          `json:"id"`
	Agent     string          `json:"agent"`
	Action    string          `json:"action"`
	Arguments json.RawMessage `json:"arguments"`
	Expires   time.Time       `json:"expires"`
}

func runApprovalsList(ctx context.Context, c *cli, target daemonTarget, args []string) int {
	fs := c.flagSet("approvals list", "approvals [--server URL] list [--format text|json]")
	format := fs.String("format", "text", "output format: text (a table) or json (an array of {id, agent, action, arguments, expires})")
	serverFlag(fs, &target.server)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "toolgate approvals list: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(c.stderr, "toolgate approvals list: --format %q: use text or json\n", *format)
		return exitUsage
	}
	var pending []approvals.Request
	if code := c.admin(ctx, "approvals list", http.MethodGet, target, "/admin/approvals", nil, &pending); code != exitOK {
		return code
	}
	return printPending(c, pending, *format)
}

func runApprovalsDecide(ctx context.Context, c *cli, target daemonTarget, verb string, args []string) int {
	fs := c.flagSet("approvals "+verb, "approvals [--server URL] "+decideUsage(verb))
	serverFlag(fs, &target.server)
	reason, forD := decideFlags(fs, verb)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(c.stderr, "toolgate approvals %s: give exactly one approval ID (from `toolgate approvals list`)\n", verb)
		return exitUsage
	}
	id := fs.Arg(0)
	body := map[string]string{}
	if reason != nil {
		body["reason"] = *reason
	}
	if *forD != 0 {
		body["for"] = forD.String()
	}
	var rd io.Reader
	if len(body) > 0 {
		b, _ := json.Marshal(body)
		rd = strings.NewReader(string(b))
	}
	var r approvals.Request
	if code := c.admin(ctx, "approvals "+verb, http.MethodPost, target, "/admin/approvals/"+url.PathEscape(id)+"/"+verb, rd, &r); code != exitOK {
		return code
	}
	printDecision(c, r)
	return exitOK
}

// decideUsage is the synopsis of approve or deny.
func decideUsage(verb string) string {
	if verb == "deny" {
		return "deny ID [--reason R] [--for DURATION]"
	}
	return "approve ID [--for DURATION]"
}

// decideFlags declares the flags of approve or deny: --reason (deny) and
// --for, the same for the daemon and the -w store.
func decideFlags(fs *pflag.FlagSet, verb string) (reason *string, forD *time.Duration) {
	if verb == "deny" {
		reason = fs.String("reason", "", "why, shown to the agent and recorded in the audit")
		forD = fs.Duration("for", 0, "also refuse the identical call for this long (e.g. 1h), instead of asking again")
	} else {
		forD = fs.Duration("for", 0, "also let the same agent call the same tool under the same grant without asking for this long (e.g. 1h; at most 24h; not for strict tools)")
	}
	return reason, forD
}

// printDecision says what a decision did, its timed rule included.
func printDecision(c *cli, r approvals.Request) {
	switch r.State {
	case approvals.Approved:
		fmt.Fprintf(c.stdout, "approved %s: %s may run %s once, until %s\n", r.ID, printable(r.Agent), printable(r.Action), r.Expires.Local().Format(time.TimeOnly))
	default:
		fmt.Fprintf(c.stdout, "%s %s: %s %s\n", r.State, r.ID, printable(r.Agent), printable(r.Action))
	}
	if t := r.Rule; t != nil {
		until := t.Expires.Local().Format(time.TimeOnly)
		if t.Effect == approvals.Denied {
			fmt.Fprintf(c.stdout, "rule %s: the identical call is refused until %s\n", t.ID, until)
		} else {
			fmt.Fprintf(c.stdout, "rule %s: %s may call %s under grant %s without asking until %s\n", t.ID, printable(t.Agent), printable(t.Action), printable(t.Grant), until)
		}
	}
}

// serverFlag lets --server follow the subcommand too.
func serverFlag(fs *pflag.FlagSet, server *string) {
	fs.StringVar(server, "server", *server, "the daemon's base URL")
}

// adminToken is the token for the daemon's admin API: $TOOLGATE_ADMIN_TOKEN
// when set, else what the workspace's gateway.admin_token names (its
// environment variable or file), so an operator in the workspace's
// directory needs nothing more than the daemon does.
func (c *cli) adminToken(cmd string, ws *workspace.Workspace) (string, int) {
	if tok := c.getenv(admin.TokenEnv); tok != "" {
		return tok, exitOK
	}
	if ws == nil || ws.Gateway.AdminToken == nil {
		where := "the daemon's gateway.admin_token"
		if ws != nil {
			where = ws.Path + " declares no gateway.admin_token, so its daemon's admin API is off"
		}
		fmt.Fprintf(c.stderr, "toolgate %s: set $%s to the admin token (%s)\n", cmd, admin.TokenEnv, where)
		return "", exitUsage
	}
	tok, err := ws.Gateway.AdminToken.Resolve(c.getenv)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: the admin token gateway.admin_token names cannot be read: %v (or set $%s)\n", cmd, err, admin.TokenEnv)
		return "", exitUsage
	}
	return tok, exitOK
}

// admin calls the daemon's admin API and decodes a JSON answer into out.
func (c *cli) admin(ctx context.Context, cmd, method string, target daemonTarget, path string, body io.Reader, out any) int {
	server := target.server
	tok, code := c.adminToken(cmd, target.ws)
	if code != exitOK {
		return code
	}
	u, err := url.Parse(strings.TrimRight(server, "/") + path)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(c.stderr, "toolgate %s: --server %q: give the daemon's base URL, like %s\n", cmd, server, defaultServer)
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(ctx, adminTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: %v\n", cmd, err)
		return exitFail
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		hint := "pass --server"
		if target.ws != nil {
			hint = "or decide in the store itself: toolgate approvals -w " + target.ws.Path
		}
		fmt.Fprintf(c.stderr, "toolgate %s: cannot reach the gateway at %s: %v (is `toolgate serve` running there? %s)\n", cmd, server, err, hint)
		return exitFail
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: read answer: %v\n", cmd, err)
		return exitFail
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(data))
		if json.Unmarshal(data, &e) == nil && e.Error != "" {
			msg = e.Error
		}
		fmt.Fprintf(c.stderr, "toolgate %s: %s: %s\n", cmd, resp.Status, msg)
		return exitFail
	}
	if err := json.Unmarshal(data, out); err != nil {
		fmt.Fprintf(c.stderr, "toolgate %s: the gateway's answer is not what this toolgate expects (%v); is %s a toolgate daemon of the same version?\n", cmd, err, server)
		return exitFail
	}
	return exitOK
}

// runApprovalsStore is `toolgate approvals -w WORKSPACE …`: list, approve
// or deny in the workspace's store. The decision is a conditional update
// that only one process can win, and the winner — here, this command —
// appends its audit event, exactly as a daemon's broker would.
func runApprovalsStore(ctx context.Context, c *cli, wsPath string, rest []string) int {
	ws, err := workspace.Load(wsPath)
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	return runApprovalsStoreOf(ctx, c, ws, rest)
}

// runApprovalsStoreOf is runApprovalsStore on a workspace already read.
func runApprovalsStoreOf(ctx context.Context, c *cli, ws *workspace.Workspace, rest []string) int {
	verb := rest[0]
	fs := c.flagSet("approvals "+verb, "approvals -w WORKSPACE "+verb)
	var format, reason *string
	var forD *time.Duration
	switch verb {
	case "list":
		format = fs.String("format", "text", "output format: text (a table) or json (an array of {id, agent, action, arguments, expires})")
	case "deny", "approve":
		reason, forD = decideFlags(fs, verb)
	default:
		fmt.Fprintf(c.stderr, "toolgate approvals: unknown subcommand %q\n\n%s", verb, approvalsUsage)
		return exitUsage
	}
	if code, ok := parse(fs, rest[1:]); !ok {
		return code
	}
	if verb == "list" && (fs.NArg() > 0 || (*format != "text" && *format != "json")) {
		fmt.Fprintln(c.stderr, "toolgate approvals list: takes no argument; --format is text or json")
		return exitUsage
	}
	if verb != "list" && fs.NArg() != 1 {
		fmt.Fprintf(c.stderr, "toolgate approvals %s: give exactly one approval ID (from `toolgate approvals list`)\n", verb)
		return exitUsage
	}
	st, err := c.openStore(ctx, ws)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate approvals: %v\n", err)
		return exitFail
	}
	defer st.Close()
	if verb == "list" {
		pending, err := st.PendingApprovals(ctx, time.Now())
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate approvals list: %v\n", err)
			return exitFail
		}
		return printPending(c, pending, *format)
	}
	d := approvals.Decide{ID: fs.Arg(0), To: approvals.Approved, By: approvals.ByOperator, Now: time.Now(), TTL: ws.Gateway.Approvals.TTL.D(),
		For: *forD, RuleID: approvals.NewRuleID()}
	if d.TTL <= 0 {
		d.TTL = approvals.DefaultTTL
	}
	if verb == "deny" {
		d.To, d.Reason = approvals.Denied, *reason
	}
	r, expired, derr := st.DecideApproval(ctx, d)
	if derr == nil || expired {
		// This command made the transition, so it records it.
		if err := c.auditDecision(ws, st, r); err != nil {
			fmt.Fprintf(c.stderr, "toolgate approvals %s: %s is %s, but the audit could not record it: %v\n", verb, r.ID, r.State, err)
			return exitFail
		}
	}
	if derr != nil {
		fmt.Fprintf(c.stderr, "toolgate approvals %s: %v\n", verb, derr)
		return exitFail
	}
	printDecision(c, r)
	return exitOK
}

// openStore opens the workspace's shared store (gateway.state).
func (c *cli) openStore(ctx context.Context, ws *workspace.Workspace) (state.Store, error) {
	cfg, err := gateway.StoreConfig(ws, c.getenv)
	if err != nil {
		return nil, err
	}
	return state.Open(ctx, cfg)
}

// auditDecision appends the decision's event to the workspace's audit
// (its file, or the PostgreSQL chain), signed when the workspace signs.
func (c *cli) auditDecision(ws *workspace.Workspace, st state.Store, r approvals.Request) error {
	opts, err := gateway.AuditOptions(ws, c.getenv)
	if err != nil {
		return err
	}
	sink, err := st.OpenAudit(gateway.AuditPath(ws), opts)
	if err != nil {
		return err
	}
	// The deny reason is the operator's own text, typed here: there is no
	// credential of the workspace to redact from it in this process.
	err = sink.Append(callpipe.ApprovalEvent(r, nil))
	return errors.Join(err, sink.Close())
}

// printPending renders pending requests like the daemon-backed list.
func printPending(c *cli, pending []approvals.Request, format string) int {
	if format == "json" {
		out := make([]listed, len(pending))
		for i, r := range pending {
			out[i] = listed{ID: r.ID, Agent: r.Agent, Action: r.Action, Arguments: r.Arguments, Expires: r.Expires}
		}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(c.stderr, "toolgate approvals list: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	if len(pending) == 0 {
		fmt.Fprintln(c.stdout, "no pending approvals")
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGENT\tACTION\tEXPIRES IN\tARGUMENTS")
	for _, r := range pending {
		left := time.Until(r.Expires).Round(time.Second)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, printable(r.Agent), printable(r.Action), left, compactArgs(r.Arguments))
	}
	_ = tw.Flush()
	return exitOK
}
