package main

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

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
			// The 2025-11-25 suite's sampling scenario calls this tool;
			// sampling is deprecated from 2026-07-28 on, not removed.
			//lint:ignore SA1019 the conformance server implements the deprecated feature the suite tests
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
	s.AddTool(mcp.NewToolWithRawSchema("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", []byte(jsonSchema202012)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("ok"), nil })
	s.AddTool(mcp.NewTool("test_reconnection", mcp.WithDescription("Answers after a short delay (SSE polling scenario)")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			time.Sleep(100 * time.Millisecond)
			return text("Reconnection test completed successfully"), nil
		})
}

// jsonSchema202012 is the suite's json-schema-2020-12 fixture: the
// keywords (SEP-1613, SEP-2106) a server and a proxy must pass on
// unchanged.
const jsonSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

var (
	testImage = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	testAudio = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)
