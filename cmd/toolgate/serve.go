package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"

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
	stopReloading := startReloading(ctx, g)
	defer stopReloading()
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
	g.SetBaseURL(baseURL(ln.Addr()))
	if g.Workspace().Gateway.AdminToken == nil {
		c.log.Warn("gateway.admin_token is not set: the admin API and console are off, so a held call can only be decided with `toolgate approvals -w WORKSPACE`; set gateway.admin_token: {env: NAME} and export NAME to turn them on")
	}
	c.log.Info("listening", "addr", ln.Addr().String(), "workspace", path, "agent", *agent)
	if err := g.Serve(ctx, ln, opts); err != nil {
		fmt.Fprintf(c.stderr, "toolgate serve: %v\n", err)
		return exitFail
	}
	return exitOK
}

// startReloading reloads the workspace on SIGHUP and when its file
// changes (docs/deploy.md), until the returned function is called. Every mode
// reloads — daemon, per-agent HTTP and stdio instances — so the processes
// of one workspace decide under the same revision.
func startReloading(ctx context.Context, g *gateway.Gateway) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		g.WatchWorkspace(ctx)
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				_ = g.Reload(ctx, gateway.ReloadSignal) // logged, audited and shown in /admin/status
			}
		}
	}()
	return func() {
		signal.Stop(hup)
		cancel()
		wg.Wait()
	}
}

// baseURL is how an operator on this machine reaches the listener: an
// address bound to every interface is reached on loopback.
func baseURL(addr net.Addr) string { return listenURL(addr.String()) }

// listenURL is baseURL for a listen address as written (gateway.listen):
// an empty or unspecified host is this machine's loopback.
func listenURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}
