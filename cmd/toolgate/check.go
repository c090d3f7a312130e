package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

func runCheck(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("check", "check [-w FILE] [--format text|json] [--offline]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	format := fs.String("format", "text", "output format: text or json")
	offline := fs.Bool("offline", false, "contact no server: take the proxied servers' tools from toolgate.lock")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "toolgate check: unexpected argument %q (the workspace is given with -w FILE)\n", fs.Arg(0))
		return exitUsage
	}
	if *format != "text" && *format != "json" {
		fmt.Fprintf(c.stderr, "toolgate check: --format %q: use text or json\n", *format)
		return exitUsage
	}
	// The file is accepted as the gateway accepts it at start and on a
	// reload (gateway.CheckLocked); live, the names the servers list now
	// count too.
	var d *decider
	var derr error
	loaded, err := gateway.CheckLocked(ctx, c.workspacePath(*wsFlag), gateway.LoadOptions{
		Listed: func(ws *workspace.Workspace, policy *grantcheck.Policy, lock *pin.Lock) (map[string][]string, error) {
			if d, derr = c.newDecider(ctx, ws, policy, lock, *offline); derr != nil {
				return nil, derr
			}
			d.warnUnlisted(c, "check")
			return d.liveNames(), nil
		},
	})
	if derr != nil {
		fmt.Fprintf(c.stderr, "toolgate check: %v\n", derr)
		return exitFail
	}
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	ws := loaded.Workspace
	sum := d.summary()
	warnings := packs.CredentialProgramWarnings(ws)
	if w, ok := unsignedAuditWarning(ws); ok {
		warnings = append(warnings, w)
	}
	warnings = append(warnings, gateway.NameWarnings(ws, loaded.Lock)...)
	warnings = append(warnings, wildcardWriteWarnings(ws, sum)...)
	// The pins are compared with what the decider listed: each server is
	// contacted once.
	lister := *c
	lister.listServerTools = func(context.Context, *workspace.Workspace) (map[string][]pin.Tool, map[string]error) {
		return d.tools, d.listErrs
	}
	pins, err := lister.checkPins(ctx, ws, !*offline)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate check: %v\n", err)
		return exitFail
	}
	if *format == "json" {
		out := struct {
			Workspace string          `json:"workspace"`
			Revision  string          `json:"revision"`
			Warnings  []packs.Warning `json:"warnings,omitempty"`
			Pins      *pinReport      `json:"pins,omitempty"`
			grantcheck.Summary
		}{ws.Path, ws.Revision, warnings, pins, sum}
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(c.stderr, "toolgate check: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	// Warnings do not fail the check: the workspace is valid, but an
	// operator should change it. They go to stderr in FILE:LINE:COL form.
	for _, w := range warnings {
		fmt.Fprintln(c.stderr, w.String())
	}
	printSummary(c, ws, sum)
	printPins(c, ws, pins)
	return exitOK
}

// checkPins compares the live tool definitions with toolgate.lock, when
// there is one (nil otherwise): pack commands from the workspace, and the
// tools of the servers it can reach when servers is set. A lock that
// cannot be read is an error (the gateway would not start with it).
func (c *cli) checkPins(ctx context.Context, ws *workspace.Workspace, servers bool) (*pinReport, error) {
	lockPath := pin.PathFor(ws.Path)
	old, err := pin.Read(lockPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w (the gateway refuses to start with it: fix it, or run `toolgate pin --update`)", err)
	}
	rep, _, _, err := c.comparePins(ctx, ws, old, lockPath, servers)
	if err != nil {
		return nil, err
	}
	var notPinned []pinResult
	for _, r := range rep.Results {
		if pin.Status(r.Status) != pin.StatusPinned {
			notPinned = append(notPinned, r)
		}
	}
	rep.Results = nonNilResults(notPinned)
	return &rep, nil
}

func nonNilResults(r []pinResult) []pinResult {
	if r == nil {
		return []pinResult{}
	}
	return r
}

// printPins says which tools the gateway hides and refuses because their
// definition is not the pinned one.
func printPins(c *cli, ws *workspace.Workspace, rep *pinReport) {
	fmt.Fprintf(c.stdout, "\nPinned tool definitions\n")
	if rep == nil {
		fmt.Fprintf(c.stdout, "  no %s beside the workspace: definitions are not pinned (`toolgate pin` pins them)\n", pin.FileName)
		return
	}
	hidden := 0
	for _, r := range rep.Results {
		switch pin.Status(r.Status) {
		case pin.StatusChanged:
			hidden++
			fmt.Fprintf(c.stdout, "  CHANGED  %s:%s  pinned %s, now %s — hidden and refused\n", r.Surface, r.Tool, r.Pinned, r.Live)
		case pin.StatusNew:
			hidden++
			fmt.Fprintf(c.stdout, "  NEW      %s:%s  not pinned, now %s — hidden and refused\n", r.Surface, r.Tool, r.Live)
		case pin.StatusInvalid:
			hidden++
			fmt.Fprintf(c.stdout, "  INVALID  %s:%s  its definition cannot be pinned — hidden and refused\n", r.Surface, r.Tool)
		case pin.StatusGone:
			fmt.Fprintf(c.stdout, "  gone     %s:%s  pinned but no longer listed\n", r.Surface, r.Tool)
		}
	}
	for _, s := range rep.Removed {
		fmt.Fprintf(c.stdout, "  removed  %s  pinned, but no longer in the workspace\n", s)
	}
	for _, s := range slices.Sorted(maps.Keys(rep.Unavailable)) {
		fmt.Fprintf(c.stdout, "  not checked  %s: %s\n", s, rep.Unavailable[s])
	}
	if hidden == 0 {
		fmt.Fprintf(c.stdout, "  %s: every tool checked matches its pin\n", rep.Lock)
		return
	}
	fmt.Fprintf(c.stdout, "  %s: %d tool(s) differ from their pin; review them, then `toolgate pin -w %s --update`\n", rep.Lock, hidden, ws.Path)
}

// printLoadError writes each workspace problem as FILE:LINE:COL: message,
// the form editors and CI annotations jump to.
func printLoadError(c *cli, err error) {
	list := workspace.AsList(err)
	for _, e := range list {
		fmt.Fprintln(c.stderr, e.Error())
	}
	if len(list) > 1 {
		fmt.Fprintf(c.stderr, "%d problems; the workspace was not loaded\n", len(list))
	}
}

func printSummary(c *cli, ws *workspace.Workspace, sum grantcheck.Summary) {
	fmt.Fprintf(c.stdout, "%s: ok (revision %.12s)\n\nSurfaces\n", ws.Path, ws.Revision)
	tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
	for _, s := range sum.Surfaces {
		kind := "command pack"
		if s.Kind != grantcheck.KindPackSurface {
			kind = "MCP server"
			if !s.Listed {
				kind += " (tools listed at run time; only declared ones shown)"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t\t\n", s.ID, kind)
		for _, m := range s.Members {
			fmt.Fprintf(tw, "    %s\t%s\t%s\t\n", m.Name, m.Effects, m.Tier)
		}
	}
	tw.Flush()
	fmt.Fprintf(c.stdout, "\nAgents (what each may call; approval = a human must approve each call)\n")
	for _, a := range sum.Agents {
		scopes := "none"
		if len(a.Scopes) > 0 {
			scopes = strings.Join(a.Scopes, ", ")
		}
		fmt.Fprintf(c.stdout, "  %s  (scopes: %s)\n", a.ID, scopes)
		tw := tabwriter.NewWriter(c.stdout, 2, 4, 2, ' ', 0)
		if len(a.Tools) == 0 {
			fmt.Fprintf(tw, "    (no tools)\n")
		}
		for _, t := range a.Tools {
			why := "via " + t.Grant
			if t.Decision == grantcheck.Deny {
				why = denyWhy(t)
			}
			if len(t.ApprovedBy) > 0 {
				why += "; " + strings.Join(t.ApprovedBy, ", ") + " of approvals.rules may approve it without a human"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", t.Tool, t.Effects, t.Tier, t.Decision, why)
		}
		for _, u := range a.Unenumerated {
			fmt.Fprintf(tw, "    %s\t\t\t\tevery tool the server lists at run time\n", u)
		}
		tw.Flush()
	}
}

func denyWhy(t grantcheck.AgentTool) string {
	if t.Refusal != "" {
		return "granted by " + t.Grant + ", but " + t.Refusal
	}
	if len(t.MissingScopes) > 0 {
		return "granted by " + t.Grant + ", but missing scopes: " + strings.Join(t.MissingScopes, ", ")
	}
	return "granted by " + t.Grant + ", but the " + string(t.Tier) + " tier refuses " + string(t.Effects) + "s"
}

// unsignedAuditWarning warns of an audit without gateway.audit.signing_key
// (the default): its tail can be cut or the whole chain rewritten and
// `audit verify` cannot tell. It names the one command and the one line
// that fix it.
func unsignedAuditWarning(ws *workspace.Workspace) (packs.Warning, bool) {
	a := ws.Gateway.Audit
	if a.SigningKey != nil {
		return packs.Warning{}, false
	}
	pos := a.Pos
	if pos.Line == 0 {
		pos = ws.Gateway.Pos
	}
	if pos.Line == 0 {
		pos = workspace.Pos{File: ws.Path, Line: 1, Col: 1}
	}
	dir := filepath.Dir(ws.Path)
	return packs.Warning{Pos: pos, Msg: "gateway.audit.signing_key is not set: a truncated or rewritten audit tail cannot be detected " +
		"(`toolgate audit verify` can only check that the chain is whole as far as it goes). Fix: run `toolgate audit keygen --private " +
		filepath.Join(dir, "audit-signing.key") + " --public " + filepath.Join(dir, "audit-signing.pub") +
		"` and add `signing_key: {file: audit-signing.key}` under gateway.audit (then verify with --public-key audit-signing.pub)"}, true
}
