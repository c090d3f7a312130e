package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/harness"
)

func runMCPConfig(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("mcp-config", "mcp-config [-w FILE] --agent ID --harness claude|codex|cursor|gemini|vscode|opencode|qwen|copilot|cline|crush [--mode stdio|http] [--allowed-tools | --settings]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	agent := fs.String("agent", "", "the agent the harness runs as (required)")
	harnessFlag := fs.String("harness", "", "the harness: claude, codex, cursor, gemini, vscode, opencode, qwen, copilot, cline or crush (required)")
	mode := fs.String("mode", "stdio", "stdio: the harness launches toolgate serve --stdio per surface; http: it connects to the daemon with the agent's token")
	allowed := fs.Bool("allowed-tools", false, "claude: print just the --allowed-tools value derived from the grant, comma-separated; copilot: the --allow-tool values, one per line")
	settings := fs.Bool("settings", false, "claude only: print a settings.json whose permissions.allow is the derived allowlist")
	command := fs.String("toolgate", "", "the toolgate executable stdio entries launch (default: this executable)")
	baseURL := fs.String("url", "", "http mode: the daemon's base URL (default http://<gateway.listen>)")
	tokenEnv := fs.String("token-env", "", "http mode: the environment variable holding the bearer token (default: the agent's token variable, or TOOLGATE_TOKEN_<AGENT> for an OAuth access token)")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(c.stderr, "toolgate mcp-config: "+format+"\n", a...)
		return exitUsage
	}
	switch {
	case fs.NArg() > 0:
		return fail("unexpected argument %q (the workspace is given with -w FILE)", fs.Arg(0))
	case *agent == "":
		return fail("--agent ID is required: the config is for one agent's identity")
	case *harnessFlag == "":
		return fail("--harness is required: claude, codex, cursor, gemini, vscode, opencode, qwen, copilot, cline or crush")
	case *allowed && *settings:
		return fail("--allowed-tools and --settings print different things; pick one")
	}
	h, err := harness.ParseHarness(*harnessFlag)
	if err != nil {
		return fail("%v", err)
	}
	switch {
	case *allowed && h != harness.Claude && h != harness.Copilot:
		return fail("--allowed-tools prints Claude Code's --allowed-tools or Copilot CLI's --allow-tool values; for %s the allowlist is part of the config itself", h)
	case *settings && h != harness.Claude:
		return fail("--settings is Claude Code's allowlist; for %s the allowlist is part of the config itself", h)
	}
	m := harness.Mode(*mode)
	if m != harness.ModeStdio && m != harness.ModeHTTP {
		return fail("--mode %q: use stdio or http", *mode)
	}
	path := c.workspacePath(*wsFlag)
	ws, policy, err := gateway.Check(ctx, path)
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	if *allowed && h == harness.Copilot {
		list, err := harness.CopilotAllowTools(policy, *agent)
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate mcp-config: %v\n", err)
			return exitFail
		}
		fmt.Fprintln(c.stdout, strings.Join(list, "\n"))
		return exitOK
	}
	if *allowed || *settings {
		list, err := harness.AllowedTools(policy, *agent)
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate mcp-config: %v\n", err)
			return exitFail
		}
		if *allowed {
			fmt.Fprintln(c.stdout, strings.Join(list, ","))
			return exitOK
		}
		out, err := harness.ClaudeSettings(list)
		if err != nil {
			fmt.Fprintf(c.stderr, "toolgate mcp-config: %v\n", err)
			return exitFail
		}
		_, _ = c.stdout.Write(out)
		return exitOK
	}
	exe := *command
	if exe == "" {
		if exe, err = os.Executable(); err != nil {
			fmt.Fprintf(c.stderr, "toolgate mcp-config: cannot tell where this executable is (%v); pass --toolgate PATH\n", err)
			return exitFail
		}
	}
	out, err := harness.Config(harness.ConfigOptions{Harness: h, Mode: m, Agent: *agent, Workspace: ws, Policy: policy,
		WorkspacePath: path, Command: exe, BaseURL: strings.TrimSuffix(*baseURL, "/"), TokenVar: *tokenEnv})
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate mcp-config: %v\n", err)
		return exitFail
	}
	_, _ = c.stdout.Write(out)
	if m == harness.ModeHTTP {
		// How the token travels, for the person wiring it up; stderr, so
		// stdout stays a config the harness reads as is.
		if v, err := harness.TokenVar(ws, *agent, *tokenEnv); err == nil {
			fmt.Fprint(c.stderr, harness.TokenNote(h, ws, *agent, v))
		}
	}
	return exitOK
}
