package main

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The diagnostic tools of the suite's 2026-07-28 scenarios
// (server-stateless, http-custom-header-server-validation): each exists
// so that the suite can watch one rule of the stateless protocol.

// capabilityTool is the tool that needs the client's sampling capability;
// a 2026-07-28 call without it is refused by guard (-32021, HTTP 400).
const capabilityTool = "test_missing_capability"

// headerTool is the tool whose argument travels in an Mcp-Param header
// (SEP-2243), validated by mcp-go against the body.
const headerTool = "test_header_param"

// toggles adds and removes a tool or prompt so that every call changes the
// list (and mcp-go announces it on subscriptions/listen streams).
type toggles struct {
	mu            sync.Mutex
	tool, prompt  bool
	srv           *server.MCPServer
	dynamicTool   mcp.Tool
	dynamicPrompt mcp.Prompt
}

func (t *toggles) toggleTool() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tool {
		t.srv.DeleteTools(t.dynamicTool.Name)
	} else {
		t.srv.AddTool(t.dynamicTool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("dynamic"), nil })
	}
	t.tool = !t.tool
}

func (t *toggles) togglePrompt() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.prompt {
		t.srv.DeletePrompts(t.dynamicPrompt.Name)
	} else {
		t.srv.AddPrompt(t.dynamicPrompt, func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: "dynamic"}}}}, nil
		})
	}
	t.prompt = !t.prompt
}

func registerDiagnostics(s *server.MCPServer) {
	tg := &toggles{
		srv:           s,
		dynamicTool:   mcp.NewTool("test_dynamic_tool", mcp.WithDescription("Present every other call of test_trigger_tool_change")),
		dynamicPrompt: mcp.NewPrompt("test_dynamic_prompt", mcp.WithPromptDescription("Present every other call of test_trigger_prompt_change")),
	}
	s.AddTool(noArgs(capabilityTool, "Needs the client's sampling capability (refused with -32021 without it)"),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("Success"), nil })
	s.AddTool(noArgs("test_streaming_elicitation", "Streams a progress notification, never a request, before its result"),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				_ = s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": req.Params.Meta.ProgressToken, "progress": 50, "total": 100,
				})
			}
			return text("Streaming complete"), nil
		})
	s.AddTool(noArgs("test_logging_tool", "Logs at info level: only delivered when the request asked for a log level"),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = s.SendLogMessageToClient(ctx, mcp.NewLoggingMessageNotification(mcp.LoggingLevelInfo, "conformance-test-server", "Diagnostic trace logging activated"))
			settle()
			return text("Logging evaluated"), nil
		})
	s.AddTool(noArgs("test_trigger_tool_change", "Adds or removes test_dynamic_tool (tools/list_changed)"),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tg.toggleTool()
			return text("Mutation triggered"), nil
		})
	s.AddTool(noArgs("test_trigger_prompt_change", "Adds or removes test_dynamic_prompt (prompts/list_changed)"),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tg.togglePrompt()
			return text("Mutation triggered"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema(headerTool, "Echoes region, which the client also sends as the Mcp-Param-Region header", []byte(`{
  "type": "object",
  "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
  "required": ["region"]
}`)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("region " + req.GetString("region", "")), nil
		})
}
