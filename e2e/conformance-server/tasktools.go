package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The tools of the suite's tasks-* scenarios. Each task tool is listed
// (and runs synchronously, for a client without the tasks extension)
// through mcp-go, and runs as a task through the guard (tasks.go).

// taskSecond is one of slow_compute's "seconds": a quarter of a real one,
// so that the suite's 1- and 2-second tasks keep a run short.
const taskSecond = 250 * time.Millisecond

// maxSyncCompute bounds slow_compute run synchronously.
const maxSyncCompute = 20 * time.Second

// taskTool is how the guard runs a task tool.
type taskTool struct {
	// required: a client without the tasks extension gets -32021.
	required bool
	// before, when it returns ok, answers the call without a task (an
	// MRTR round before the task starts).
	before func(inputResponses map[string]json.RawMessage) (result any, ok bool)
	body   func(args map[string]any, inputResponses map[string]json.RawMessage) taskBody
}

func noPreRound(map[string]json.RawMessage) (any, bool) { return nil, false }

func textResult(s string, isError bool) map[string]any {
	r := map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": s}}}
	if isError {
		r["isError"] = true
	}
	return r
}

func elicitRequest(message string, properties map[string]any, required ...string) map[string]any {
	return map[string]any{"method": string(mcp.MethodElicitationCreate), "params": map[string]any{
		"message": message, "requestedSchema": map[string]any{"type": "object", "properties": properties, "required": required}}}
}

// accepted returns an elicitation answer's content if the user accepted.
func accepted(raw json.RawMessage) (map[string]any, bool) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Action != "accept" {
		return nil, false
	}
	return r.Content, true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func computeFor(args map[string]any) (time.Duration, string) {
	seconds, _ := args["seconds"].(float64)
	label, _ := args["label"].(string)
	return time.Duration(seconds * float64(taskSecond)), label
}

var errCancelled = map[string]any{"code": mcp.REQUEST_INTERRUPTED, "message": "task cancelled"}

func askDelete(filename string) map[string]any {
	return elicitRequest("Delete "+filename+"?", map[string]any{"confirm": map[string]any{"type": "boolean"}}, "confirm")
}

func askPerson(which string) map[string]any {
	return elicitRequest("Who is the "+which+" person?", map[string]any{
		"name": map[string]any{"type": "string"}, "confirm": map[string]any{"type": "boolean"}}, "name")
}

// taskTools are the tools the guard runs as tasks, by name.
func taskTools() map[string]taskTool {
	return map[string]taskTool{
		"slow_compute": {before: noPreRound, body: func(args map[string]any, _ map[string]json.RawMessage) taskBody {
			d, label := computeFor(args)
			return func(ctx context.Context, _ *task) (any, map[string]any) {
				if sleepCtx(ctx, d) != nil {
					return nil, errCancelled
				}
				return textResult(fmt.Sprintf("slow_compute %s: done", label), false), nil
			}
		}},
		"failing_job": {required: true, before: noPreRound, body: func(map[string]any, map[string]json.RawMessage) taskBody {
			return func(ctx context.Context, _ *task) (any, map[string]any) {
				if sleepCtx(ctx, 100*time.Millisecond) != nil {
					return nil, errCancelled
				}
				return textResult("failing_job failed, as it always does", true), nil
			}
		}},
		"protocol_error_job": {before: noPreRound, body: func(map[string]any, map[string]json.RawMessage) taskBody {
			return func(context.Context, *task) (any, map[string]any) {
				return nil, map[string]any{"code": mcp.INTERNAL_ERROR, "message": "protocol_error_job: an internal error, on purpose"}
			}
		}},
		"confirm_delete": {before: noPreRound, body: func(args map[string]any, _ map[string]json.RawMessage) taskBody {
			filename, _ := args["filename"].(string)
			return func(ctx context.Context, t *task) (any, map[string]any) {
				answers, err := t.ask(ctx, map[string]any{"confirm": askDelete(filename)})
				if err != nil {
					return nil, errCancelled
				}
				if c, ok := accepted(answers["confirm"]); ok && c["confirm"] == true {
					return textResult("Deleted "+filename, false), nil
				}
				return textResult("Kept "+filename, false), nil
			}
		}},
		"multi_input": {before: noPreRound, body: func(map[string]any, map[string]json.RawMessage) taskBody {
			return func(ctx context.Context, t *task) (any, map[string]any) {
				answers, err := t.ask(ctx, map[string]any{"first": askPerson("first"), "second": askPerson("second")})
				if err != nil {
					return nil, errCancelled
				}
				first, _ := accepted(answers["first"])
				second, _ := accepted(answers["second"])
				return textResult(fmt.Sprintf("first=%v, second=%v", first["name"], second["name"]), false), nil
			}
		}},
		"test_tool_with_task": {required: true,
			before: func(in map[string]json.RawMessage) (any, bool) {
				if _, ok := accepted(in["user_name"]); ok {
					return nil, false
				}
				return map[string]any{"resultType": "input_required", "inputRequests": map[string]any{
					"user_name": elicitRequest("What is your name?", map[string]any{"name": map[string]any{"type": "string"}}, "name")}}, true
			},
			body: func(_ map[string]any, in map[string]json.RawMessage) taskBody {
				c, _ := accepted(in["user_name"])
				return func(context.Context, *task) (any, map[string]any) {
					return textResult(fmt.Sprintf("Hello, %v! (finished as a task)", c["name"]), false), nil
				}
			}},
	}
}

// registerTaskTools lists the task tools and greet through mcp-go, with
// their synchronous behaviour for clients without the tasks extension.
func registerTaskTools(s *server.MCPServer) {
	optional, required := mcp.WithTaskSupport(mcp.TaskSupportOptional), mcp.WithTaskSupport(mcp.TaskSupportRequired)
	s.AddTool(mcp.NewTool("greet", mcp.WithDescription("Says hello (never a task)"), mcp.WithString("name", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("Hello, " + req.GetString("name", "") + "!"), nil
		})
	s.AddTool(mcp.NewTool("slow_compute", mcp.WithDescription("Sleeps `seconds` (a quarter second each) then answers; a task for clients with the tasks extension"),
		mcp.WithNumber("seconds", mcp.Required()), mcp.WithString("label"), optional),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			d, label := computeFor(req.GetArguments())
			if err := sleepCtx(ctx, min(d, maxSyncCompute)); err != nil {
				return nil, err
			}
			return text(fmt.Sprintf("slow_compute %s: done", label)), nil
		})
	s.AddTool(mcp.NewTool("failing_job", mcp.WithDescription("Fails as a tool; runs only as a task"), required),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("failing_job failed, as it always does"), nil
		})
	s.AddTool(mcp.NewTool("protocol_error_job", mcp.WithDescription("Fails with a protocol error"), optional),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, errors.New("protocol_error_job: an internal error, on purpose")
		})
	s.AddTool(mcp.NewTool("confirm_delete", mcp.WithDescription("Asks for a confirmation before \"deleting\" filename"),
		mcp.WithString("filename", mcp.Required()), optional),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			filename := req.GetString("filename", "")
			if r := server.ElicitationResponse(req.Params.InputResponses, "confirm"); r != nil {
				if m, _ := r.Content.(map[string]any); r.Action == mcp.ElicitationResponseActionAccept && m["confirm"] == true {
					return text("Deleted " + filename), nil
				}
				return text("Kept " + filename), nil
			}
			return server.NewInputRequestBuilder("").Elicit("confirm", mcp.ElicitationParams{Message: "Delete " + filename + "?",
				RequestedSchema: askDelete(filename)["params"].(map[string]any)["requestedSchema"]}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("multi_input", mcp.WithDescription("Asks two questions at once"), optional),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			first, okFirst := elicited(req.Params.InputResponses, "first", "name")
			second, okSecond := elicited(req.Params.InputResponses, "second", "name")
			if okFirst && okSecond {
				return text("first=" + first + ", second=" + second), nil
			}
			schema := askPerson("first")["params"].(map[string]any)["requestedSchema"]
			return server.NewInputRequestBuilder("").
				Elicit("first", mcp.ElicitationParams{Message: "Who is the first person?", RequestedSchema: schema}).
				Elicit("second", mcp.ElicitationParams{Message: "Who is the second person?", RequestedSchema: schema}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("test_tool_with_task", mcp.WithDescription("Asks for a name (MRTR), then finishes as a task"), required),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError("test_tool_with_task runs only as a task"), nil
		})
}
