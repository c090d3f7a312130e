// Command conformance-server is the MCP server the official conformance
// suite (@modelcontextprotocol/conformance) is run against, directly and
// through toolgate's proxy. It implements the tools, resources and prompts
// the suite's server scenarios call (after mcp-go's own conformance
// example, MIT), plus a few tools the proxy's failure tests and benchmark
// use: echo, calls, pid, crash, hang, flood, add_tool, delete_all.
//
// Usage: conformance-server -stdio | -addr 127.0.0.1:0 (prints
// "listening ADDR" on stdout once it accepts connections).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	stdio := flag.Bool("stdio", false, "serve MCP on stdin/stdout")
	addr := flag.String("addr", "127.0.0.1:0", "streamable HTTP listen address (path /mcp)")
	flag.Parse()

	var calls atomic.Int64
	hooks := &server.Hooks{}
	hooks.AddBeforeCallTool(func(context.Context, any, *mcp.CallToolRequest) { calls.Add(1) })
	s := server.NewMCPServer("toolgate-conformance", "1.0.0",
		server.WithHooks(hooks),
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(true),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{}),
		server.WithLogging(),
		server.WithElicitation(),
	)
	s.EnableSampling()
	registerTools(s)
	registerTestTools(s, &calls)
	registerResources(s)
	registerPrompts(s)

	if *stdio {
		if err := server.ServeStdio(s); err != nil {
			log.Fatal(err)
		}
		return
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(s))
	// The same server over the legacy HTTP+SSE transport: GET /sse, POST /message.
	sse := server.NewSSEServer(s, server.WithBaseURL("http://"+ln.Addr().String()))
	mux.Handle("/sse", sse)
	mux.Handle("/message", sse)
	fmt.Printf("listening %s\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
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

// settle gives mcp-go's notification queue time to drain before the
// answer is written: its streamable HTTP server may otherwise close the
// response stream with the last notification still queued, and the
// scenario then flakes whoever the client is (mcp-go issue 969).
func settle() { time.Sleep(20 * time.Millisecond) }

func text(s string) *mcp.CallToolResult { return mcp.NewToolResultText(s) }

func registerTools(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("test_simple_text", mcp.WithDescription("Returns a simple text response")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("This is a simple text response for testing."), nil
		})
	s.AddTool(mcp.NewTool("test_image_content", mcp.WithDescription("Returns image content")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewImageContent(testImage, "image/png")}}, nil
		})
	s.AddTool(mcp.NewTool("test_audio_content", mcp.WithDescription("Returns audio content")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewAudioContent(testAudio, "audio/wav")}}, nil
		})
	s.AddTool(mcp.NewTool("test_embedded_resource", mcp.WithDescription("Returns an embedded text resource")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewEmbeddedResource(mcp.TextResourceContents{
				URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content.",
			})}}, nil
		})
	s.AddTool(mcp.NewTool("test_multiple_content_types", mcp.WithDescription("Returns text, image and an embedded resource")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				mcp.TextContent{Type: "text", Text: "Multiple content types test:"},
				mcp.NewImageContent(testImage, "image/png"),
				mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "test://mixed-content-resource", MIMEType: "application/json", Text: `{"test":"data","value":123}`}),
			}}, nil
		})
	s.AddTool(mcp.NewTool("test_error_handling", mcp.WithDescription("Returns an intentional tool error")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("This tool intentionally returns an error for testing"), nil
		})
	s.AddTool(mcp.NewTool("test_sampling", mcp.WithDescription("Requests an LLM response from the client"),
		mcp.WithString("prompt", mcp.Description("Prompt to send to the LLM"), mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := s.RequestSampling(ctx, mcp.CreateMessageRequest{
				Request: mcp.Request{Method: string(mcp.MethodSamplingCreateMessage)},
				CreateMessageParams: mcp.CreateMessageParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: req.GetString("prompt", "")}}},
					MaxTokens: 100,
				},
			})
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			out := "No response"
			if c, ok := res.Content.(mcp.TextContent); ok {
				out = c.Text
			}
			return text("LLM response: " + out), nil
		})
	elicit := func(ctx context.Context, message string, schema map[string]any, prefix string) (*mcp.CallToolResult, error) {
		res, err := s.RequestElicitation(ctx, mcp.ElicitationRequest{
			Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
			Params:  mcp.ElicitationParams{Message: message, RequestedSchema: schema},
		})
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return text(fmt.Sprintf("%saction=%s, content=%v", prefix, res.Action, res.Content)), nil
	}
	s.AddTool(mcp.NewTool("test_elicitation", mcp.WithDescription("Requests information from the user"),
		mcp.WithString("message", mcp.Description("Message to show the user"), mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, req.GetString("message", ""), map[string]any{
				"type": "object",
				"properties": map[string]any{
					"username": map[string]any{"type": "string", "description": "User's response"},
					"email":    map[string]any{"type": "string", "description": "User's email address"},
				},
				"required": []string{"username", "email"},
			}, "User response: ")
		})
	s.AddTool(mcp.NewTool("test_elicitation_sep1034_defaults", mcp.WithDescription("Requests elicitation with primitive defaults")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, "Provide your information", map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name":     map[string]any{"type": "string", "default": "John Doe"},
					"age":      map[string]any{"type": "integer", "default": 30},
					"score":    map[string]any{"type": "number", "default": 95.5},
					"status":   map[string]any{"type": "string", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
					"verified": map[string]any{"type": "boolean", "default": true},
				},
			}, "Elicitation completed: ")
		})
	s.AddTool(mcp.NewTool("test_elicitation_sep1330_enums", mcp.WithDescription("Requests elicitation with enum schemas")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return elicit(ctx, "Select options", map[string]any{
				"type": "object",
				"properties": map[string]any{
					"untitledSingle": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}},
					"titledSingle": map[string]any{"type": "string", "oneOf": []any{
						map[string]any{"const": "value1", "title": "First Option"}, map[string]any{"const": "value2", "title": "Second Option"}, map[string]any{"const": "value3", "title": "Third Option"}}},
					"legacyEnum":    map[string]any{"type": "string", "enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
					"untitledMulti": map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
					"titledMulti": map[string]any{"type": "array", "items": map[string]any{"anyOf": []any{
						map[string]any{"const": "value1", "title": "First Choice"}, map[string]any{"const": "value2", "title": "Second Choice"}, map[string]any{"const": "value3", "title": "Third Choice"}}}},
				},
			}, "Elicitation completed: ")
		})
	s.AddTool(mcp.NewTool("test_tool_with_logging", mcp.WithDescription("Emits log messages during execution")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if err := s.SendNotificationToClient(ctx, string(mcp.MethodNotificationMessage), map[string]any{
					"level": "info", "logger": "conformance-test-server", "data": msg,
				}); err != nil {
					return nil, err
				}
			}
			settle()
			return text("Tool with logging executed successfully"), nil
		})
	s.AddTool(mcp.NewTool("test_tool_with_progress", mcp.WithDescription("Reports progress notifications")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var token mcp.ProgressToken
			if req.Params.Meta != nil {
				token = req.Params.Meta.ProgressToken
			}
			for i, p := range []int{0, 50, 100} {
				if i > 0 {
					time.Sleep(50 * time.Millisecond)
				}
				if token == nil {
					continue
				}
				if err := s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
					"progressToken": token, "progress": p, "total": 100,
				}); err != nil {
					return nil, err
				}
			}
			settle()
			return text("progress reported"), nil
		})
	s.AddTool(mcp.NewToolWithRawSchema("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", []byte(`{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {"address": {"type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
  "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
  "additionalProperties": false
}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	s.AddTool(mcp.NewTool("test_reconnection", mcp.WithDescription("Answers after a short delay (SSE polling scenario)")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			time.Sleep(100 * time.Millisecond)
			return text("Reconnection test completed successfully"), nil
		})
}

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

func registerResources(s *server.MCPServer) {
	s.AddResource(mcp.NewResource("test://static-text", "static-text",
		mcp.WithResourceDescription("A static text resource for testing"), mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."}}, nil
		})
	s.AddResource(mcp.NewResource("test://static-binary", "static-binary",
		mcp.WithResourceDescription("A static binary resource for testing"), mcp.WithMIMEType("image/png")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: testImage}}, nil
		})
	s.AddResource(mcp.NewResource("test://watched-resource", "watched-resource",
		mcp.WithResourceDescription("A resource clients subscribe to"), mcp.WithMIMEType("text/plain")),
		func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "watched"}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("test://template/{id}/data", "template",
		mcp.WithTemplateDescription("A resource template with parameter substitution"), mcp.WithTemplateMIMEType("application/json")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			parts := strings.Split(req.Params.URI, "/")
			id := ""
			if len(parts) == 5 {
				id = parts[3]
			}
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":%q}`, id, "Data for ID: "+id)}}, nil
		})
}

func registerPrompts(s *server.MCPServer) {
	s.AddPrompt(mcp.NewPrompt("test_simple_prompt", mcp.WithPromptDescription("A simple prompt without arguments")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: "This is a simple prompt for testing."}}}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_arguments", mcp.WithPromptDescription("A prompt with required arguments"),
		mcp.WithArgument("arg1", mcp.ArgumentDescription("First test argument"), mcp.RequiredArgument()),
		mcp.WithArgument("arg2", mcp.ArgumentDescription("Second test argument"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			t := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", req.Params.Arguments["arg1"], req.Params.Arguments["arg2"])
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: t}}}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_embedded_resource", mcp.WithPromptDescription("A prompt that includes an embedded resource"),
		mcp.WithArgument("resourceUri", mcp.ArgumentDescription("URI of the resource to embed"), mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			uri := req.Params.Arguments["resourceUri"]
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: "Embedded resource content for testing."})},
				{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: "Please process the embedded resource above."}},
			}}, nil
		})
	s.AddPrompt(mcp.NewPrompt("test_prompt_with_image", mcp.WithPromptDescription("A prompt that includes image content")),
		func(context.Context, mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
				{Role: mcp.RoleUser, Content: mcp.NewImageContent(testImage, "image/png")},
				{Role: mcp.RoleUser, Content: mcp.TextContent{Type: "text", Text: "Please analyze the image above."}},
			}}, nil
		})
}

var (
	testImage = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	testAudio = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)
