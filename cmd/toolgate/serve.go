package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/toolgate/toolgate/gateway"
)

func runServe(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("serve", "serve [-w FILE] [--listen ADDR] [--agent ID [--stdio --surface S]]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	listen := fs.String("listen", "", "HTTP listen address (default gateway.listen, else 127.0.0.1:7330)")
	agent := fs.String("agent", "", "serve as this agent only (a per-agent instance)")
	stdio := fs.Bool("stdio", false, "speak MCP on stdin/stdout (needs --agent and --surface)")
	surface := fs.String("surface", "", "the surface to serve over stdio")
	auditPath := fs.String("audit", "", "audit log path (default gateway.audit.path)")
	_ = fs.Bool("require-token", true, "accepted for compatibility: a per-agent HTTP instance always demands its agent's bearer token")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "toolgate serve: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *stdio && (*agent == "" || *surface == "") {
		fmt.Fprintln(c.stderr, "toolgate serve: --stdio needs --agent ID and --surface S (one stdio process serves one surface)")
		return exitUsage
	}
	if !*stdio && *surface != "" {
		fmt.Fprintln(c.stderr, "toolgate serve: --surface is for --stdio; over HTTP every surface is at /mcp/<surface>")
		return exitUsage
	}
	path := c.workspacePath(*wsFlag)
	g, err := gateway.Open(ctx, path, gateway.Options{Getenv: c.getenv, Logger: c.log, AuditPath: *auditPath})
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	defer g.Close()
	if *stdio {
		if err := g.ServeStdio(ctx, *agent, *surface, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintf(c.stderr, "toolgate serve: %v\n", err)
			return exitFail
		}
		return exitOK
	}
	addr := *listen
	if addr == "" {
		addr = g.Workspace().Gateway.Listen
	}
	if addr == "" {
		addr = "127.0.0.1:7330"
	}
	opts := gateway.HTTPOptions{Agent: *agent}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate serve: listen on %s: %v\n", addr, err)
		return exitFail
	}
	c.log.Info("listening", "addr", ln.Addr().String(), "workspace", path, "agent", *agent)
	if err := g.Serve(ctx, ln, opts); err != nil {
		fmt.Fprintf(c.stderr, "toolgate serve: %v\n", err)
		return exitFail
	}
	return exitOK
}
