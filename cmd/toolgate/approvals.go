package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

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

With -w, works on the workspace's store itself (gateway.state: the
.toolgate/ directory beside it, or its PostgreSQL), which every toolgate
process of the deployment shares — daemon, per-agent and stdio instances
alike — and records the decision in the workspace's audit. Anyone who can
write that store can approve calls: its file permissions and database
roles are the trust boundary. Without -w, talks to a running daemon
(default ` + defaultServer + `) with the admin token from
$` + admin.TokenEnv + ` (the daemon's gateway.admin_token).
`

// defaultServer is where `toolgate serve` listens unless told otherwise.
const defaultServer = "http://127.0.0.1:7330"

// adminTimeout bounds one admin API request.
const adminTimeout = 30 * time.Second

func runApprovals(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("approvals", "approvals [--server URL] list|approve ID|deny ID")
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
	if *wsFlag != "" {
		if fs.Changed("server") {
			fmt.Fprintln(c.stderr, "toolgate approvals: give --server URL or -w WORKSPACE, not both")
			return exitUsage
		}
		return runApprovalsStore(ctx, c, *wsFlag, rest)
	}
	switch rest[0] {
	case "list":
		return runApprovalsList(ctx, c, *server, rest[1:])
	case "approve":
		return runApprovalsDecide(ctx, c, *server, "approve", rest[1:])
	case "deny":
		return runApprovalsDecide(ctx, c, *server, "deny", rest[1:])
	case "help":
		fmt.Fprint(c.stderr, approvalsUsage)
		return exitOK
	}
	fmt.Fprintf(c.stderr, "toolgate approvals: unknown subcommand %q\n\n%s", rest[0], approvalsUsage)
	return exitUsage
}

// listed is one pending request as `list --format json` prints it.
type listed struct {
	ID        string          `json:"id"`
	Agent     string          `json:"agent"`
	Action    string          `json:"action"`
	Arguments json.RawMessage `json:"arguments"`
	Expires   time.Time       `json:"expires"`
}

func runApprovalsList(ctx context.Context, c *cli, server string, args []string) int {
	fs := c.flagSet("approvals list", "approvals [--server URL] list [--format text|json]")
	format := fs.String("format", "text", "output format: text (a table) or json (an array of {id, agent, action, arguments, expires})")
	serverFlag(fs, &server)
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
	if code := c.admin(ctx, "approvals list", http.MethodGet, server, "/admin/approvals", nil, &pending); code != exitOK {
		return code
	}
	return printPending(c, pending, *format)
}

func runApprovalsDecide(ctx context.Context, c *cli, server, verb string, args []string) int {
	fs := c.flagSet("approvals "+verb, "approvals [--server URL] "+decideUsage(verb))
	serverFlag(fs, &server)
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
	if code := c.admin(ctx, "approvals "+verb, http.MethodPost, server, "/admin/approvals/"+url.PathEscape(id)+"/"+verb, rd, &r); code != exitOK {
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

// admin calls the daemon's admin API and decodes a JSON answer into out.
func (c *cli) admin(ctx context.Context, cmd, method, server, path string, body io.Reader, out any) int {
	tok := c.getenv(admin.TokenEnv)
	if tok == "" {
		fmt.Fprintf(c.stderr, "toolgate %s: set $%s to the daemon's admin token (the value behind gateway.admin_token)\n", cmd, admin.TokenEnv)
		return exitUsage
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
		fmt.Fprintf(c.stderr, "toolgate %s: cannot reach the gateway at %s: %v (is `toolgate serve` running there? pass --server)\n", cmd, server, err)
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
	ws, err := workspace.Load(wsPath)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate approvals: %v\n", err)
		return exitFail
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.ID, printable(r.Agent), printable(r.Action), left, printable(string(r.Arguments)))
	}
	_ = tw.Flush()
	return exitOK
}
