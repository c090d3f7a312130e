package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// registerTestTools adds the tools toolgate's own proxy tests use.
func registerTestTools(s *server.MCPServer, calls *atomic.Int64) {
	s.AddTool(mcp.NewTool("calls", mcp.WithDescription("Returns how many tools/call this process has handled, itself excluded")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(calls.Load() - 1)), nil
		})
	// CONFORMANCE_ECHO_DESCRIPTION changes echo's description: a server
	// whose tool definition changed after it was reviewed (pinning tests).
	echoDesc := "Returns its text argument"
	if d := os.Getenv("CONFORMANCE_ECHO_DESCRIPTION"); d != "" {
		echoDesc = d
	}
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription(echoDesc),
		mcp.WithString("text", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("pid", mcp.WithDescription("Returns the server's process id")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
	s.AddTool(mcp.NewTool("crash", mcp.WithDescription("Exits the server process at once")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fmt.Fprintln(os.Stderr, "crashing on request")
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answers")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			select {}
		})
	s.AddTool(mcp.NewTool("flood", mcp.WithDescription("Returns a text of the given size"),
		mcp.WithNumber("bytes", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Repeat("x", int(req.GetFloat("bytes", 0)))), nil
		})
	s.AddTool(mcp.NewTool("add_tool", mcp.WithDescription("Adds the tool added_tool (clients get tools/list_changed)")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			s.AddTool(mcp.NewTool("added_tool", mcp.WithDescription("Added at run time")),
				func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("added"), nil })
			return text("added"), nil
		})
	s.AddTool(mcp.NewTool("delete_all", mcp.WithDescription("A write the tests' grants refuse"), mcp.WithDestructiveHintAnnotation(true)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("deleted everything"), nil
		})
}
