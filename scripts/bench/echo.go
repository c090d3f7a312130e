package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// echoServer is the downstream every configuration calls: an mcp-go
// server with one tool, echo, that returns its text argument. It is the
// smallest real MCP server, so its own CPU per call is the yardstick for
// what toolgate adds.
func echoServer() *server.MCPServer {
	s := server.NewMCPServer("toolgate-bench-echo", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Returns its text argument"),
		mcp.WithString("text", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	return s
}

// serveEchoHTTP serves the echo server over streamable HTTP at /mcp on a
// loopback port and prints "listening ADDR" once it accepts connections.
func serveEchoHTTP() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("echo server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(echoServer()))
	fmt.Printf("listening %s\n", ln.Addr())
	return http.Serve(ln, mux)
}

// serveEchoStdio serves the echo server on stdin/stdout.
func serveEchoStdio() error {
	return server.NewStdioServer(echoServer()).Listen(context.Background(), os.Stdin, os.Stdout)
}
