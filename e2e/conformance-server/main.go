// Command conformance-server is the MCP server the official conformance
// suite (@modelcontextprotocol/conformance) is run against, directly and
// through toolgate's proxy. It is built on mcp-go v1.2.1 and speaks both
// protocol eras on one endpoint, chosen per request: 2025-11-25 and
// earlier (initialize, sessions) and 2026-07-28 (stateless, _meta on every
// request, server/discover, multi round-trip results, subscriptions/listen).
// It implements the tools, resources and prompts the suite's server
// scenarios call (after mcp-go's own conformance example, MIT), plus a
// few tools the proxy's failure tests and benchmark use: echo, calls, pid,
// crash, hang, flood, add_tool, delete_all.
//
// With -era 2025 it is a 2025-only server, as an SDK released before
// 2026-07-28 is: a 2026-07-28 request gets a legacy error (over HTTP 400,
// no valid session; over stdio -32601 for server/discover), from which a
// dual-era client falls back to initialize. With -era 2026 it is a
// 2026-only server: initialize gets UnsupportedProtocolVersionError
// (-32022) naming 2026-07-28. See guard.go. With -like-reference it
// answers as the suite's own reference server does where that differs
// from mcp-go (see reference.go).
//
// Usage: conformance-server [-era both|2025|2026] [-like-reference] -stdio | -addr 127.0.0.1:0
// (prints "listening ADDR" on stdout once it accepts connections).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve MCP on stdin/stdout")
	addr := flag.String("addr", "127.0.0.1:0", "streamable HTTP listen address (path /mcp)")
	era := flag.String("era", eraBoth, "protocol eras spoken: both, 2025 (a pre-2026 server) or 2026 (refuse initialize)")
	likeRef := flag.Bool("like-reference", false, "answer as the conformance suite's reference server does: server/discover lists only 2026-07-28 (initialize still served), subscriptions/listen is newline-delimited JSON under application/json (with -era both)")
	flag.Parse()
	if *era != eraBoth && *era != era2025 && *era != era2026 {
		log.Fatalf("-era %q: want both, 2025 or 2026", *era)
	}
	if *likeRef && *era != eraBoth {
		log.Fatalf("-like-reference models a server of both eras whose discover lists one: use it with -era both, not -era %s", *era)
	}

	s, g, err := newServer(*era)
	if err != nil {
		log.Fatal(err)
	}
	g.likeRef = *likeRef
	if *stdio {
		if err := serveStdio(context.Background(), s, g, os.Stdin, os.Stdout); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	// Stateful: a session ended by DELETE is unknown afterwards (404),
	// which the suite's server-session-lifecycle checks.
	httpOpts := []server.StreamableHTTPOption{server.WithStateful(true)}
	switch *era {
	case era2025:
		httpOpts = append(httpOpts, server.WithStreamableHTTPProtocolVersions(legacyVersions()...))
	case era2026:
		httpOpts = append(httpOpts, server.WithStreamableHTTPProtocolVersions(modernVersions()...))
	}
	mux := http.NewServeMux()
	g.polls = newPolling()
	mux.Handle("/mcp", g.wrap(server.NewStreamableHTTPServer(s, httpOpts...)))
	// The same server over the legacy HTTP+SSE transport: GET /sse, POST /message.
	sse := server.NewSSEServer(s, server.WithBaseURL("http://"+ln.Addr().String()))
	mux.Handle("/sse", sse)
	mux.Handle("/message", sse)
	fmt.Printf("listening %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}

// newServer builds the server speaking era, and the guard in front of it.
func newServer(era string) (*server.MCPServer, guard, error) {
	seal, err := newStateSigner()
	if err != nil {
		return nil, guard{}, err
	}
	calls := new(atomic.Int64)
	hooks := &server.Hooks{}
	hooks.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { calls.Add(1) })
	opts := []server.ServerOption{
		server.WithHooks(hooks),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{}),
		server.WithLogging(),
		server.WithElicitation(),
	}
	if era != era2025 {
		opts = append(opts, server.WithExtensions(map[string]any{tasksExtension: map[string]any{}}))
	}
	s := server.NewMCPServer("toolgate-conformance", "1.0.0", opts...)
	s.EnableSampling()
	registerTools(s)
	registerMRTR(s, seal)
	registerDiagnostics(s)
	registerTaskTools(s)
	registerTestTools(s, calls)
	registerResources(s)
	registerPrompts(s)
	g := guard{era: era}
	if era != era2025 {
		g.tasks = newTaskEngine()
	}
	return s, g, nil
}

// serveStdio serves s on newline-delimited JSON-RPC, the guard first.
func serveStdio(ctx context.Context, s *server.MCPServer, g guard, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: g.stdioLikeReference(out)}
	return server.NewStdioServer(s).Listen(ctx, g.filter(in, w), w)
}

type completions struct{}

func (completions) CompletePromptArgument(_ context.Context, _ string, arg mcp.CompleteArgument, _ mcp.CompleteContext) (*mcp.Completion, error) {
	var out []string
	for _, v := range []string{"paris", "park", "party"} {
		if strings.HasPrefix(v, arg.Value) {
			out = append(out, v)
		}
	}
	return &mcp.Completion{Values: out, Total: len(out)}, nil
}
