package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

func runCheck(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("check", "check [-w FILE] [--format text|json]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	format := fs.String("format", "text", "output format: text or json")
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
	path := c.workspacePath(*wsFlag)
	ws, policy, err := gateway.Check(ctx, path)
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	sum := policy.Summary()
	warnings := packs.CredentialProgramWarnings(ws)
	if *format == "json" {
		out := struct {
			Workspace string          `json:"workspace"`
			Revision  string          `json:"revision"`
			Warnings  []packs.Warning `json:"warnings,omitempty"`
			grantcheck.Summary
		}{ws.Path, ws.Revision, warnings, sum}
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
	return exitOK
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
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", t.Tool, t.Effects, t.Tier, t.Decision, why)
		}
		for _, u := range a.Unenumerated {
			fmt.Fprintf(tw, "    %s\t\t\t\tevery tool the server lists at run time\n", u)
		}
		tw.Flush()
	}
}

func denyWhy(t grantcheck.AgentTool) string {
	if len(t.MissingScopes) > 0 {
		return "granted by " + t.Grant + ", but missing scopes: " + strings.Join(t.MissingScopes, ", ")
	}
	return "granted by " + t.Grant + ", but the " + string(t.Tier) + " tier refuses " + string(t.Effects) + "s"
}
