package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// taskCall is a 2026-07-28 request with the tasks extension declared (or
// not), and the HTTP headers a conformant client sends with it.
type rpcCall struct {
	msg []byte
	h   http.Header
}

func taskCall(t *testing.T, method, params string, withExtension bool) rpcCall {
	t.Helper()
	caps := `{}`
	if withExtension {
		caps = `{"extensions":{"` + tasksExtension + `":{}}}`
	}
	msg := `{"jsonrpc":"2.0","id":9,"method":"` + method + `","params":{` + params + `,` + strings.Replace(modernMeta, "%s", caps, 1) + `}}`
	var req guardedRequest
	if err := json.Unmarshal([]byte(msg), &req); err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("Mcp-Protocol-Version", "2026-07-28")
	h.Set("Mcp-Method", method)
	if req.Params.Name != "" {
		h.Set("Mcp-Name", req.Params.Name)
	}
	if req.Params.TaskID != "" {
		h.Set("Mcp-Name", req.Params.TaskID)
	}
	return rpcCall{[]byte(msg), h}
}

type rpcReply struct {
	Result map[string]any
	Error  *struct {
		Code int
		Data map[string]any
	}
}

func send(t *testing.T, g guard, c rpcCall) (rpcReply, int, bool) {
	t.Helper()
	b, status, ok := g.answer(c.msg, c.h)
	var r rpcReply
	if ok {
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
	}
	return r, status, ok
}

// waitStatus polls tasks/get until the task has status, with a deadline.
func waitStatus(t *testing.T, g guard, id, status string) rpcReply {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, _, _ := send(t, g, taskCall(t, "tasks/get", `"taskId":"`+id+`"`, true))
		if r.Result["status"] == status || time.Now().After(deadline) {
			if r.Result["status"] != status {
				t.Fatalf("task %s: status %v, want %s", id, r.Result["status"], status)
			}
			return r
		}
		time.Sleep(10 * time.Millisecond) // polling a condition with a deadline, as a client does
	}
}

// TestTasksLifecycle: a task tool creates a task (flat CreateTaskResult),
// tasks/get inlines its result, a tool error is completed+isError, a
// protocol error is failed+error, cancel acks and settles.
func TestTasksLifecycle(t *testing.T) {
	t.Parallel()
	g := guard{era: eraBoth, tasks: newTaskEngine()}
	r, status, ok := send(t, g, taskCall(t, "tools/call", `"name":"slow_compute","arguments":{"seconds":0.2,"label":"x"}`, true))
	if !ok || status != http.StatusOK || r.Result["resultType"] != "task" || r.Result["task"] != nil {
		t.Fatalf("create: %v %d %+v", ok, status, r)
	}
	for _, k := range []string{"taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"} {
		if r.Result[k] == nil {
			t.Errorf("CreateTaskResult lacks %s", k)
		}
	}
	for _, k := range []string{"ttl", "pollInterval", "requestState", "result"} {
		if _, has := r.Result[k]; has {
			t.Errorf("CreateTaskResult carries %s", k)
		}
	}
	done := waitStatus(t, g, r.Result["taskId"].(string), taskCompleted)
	if res, _ := done.Result["result"].(map[string]any); res["content"] == nil || done.Result["resultType"] != "complete" {
		t.Errorf("completed task: %+v", done.Result)
	}

	r, _, _ = send(t, g, taskCall(t, "tools/call", `"name":"failing_job","arguments":{}`, true))
	done = waitStatus(t, g, r.Result["taskId"].(string), taskCompleted)
	if res, _ := done.Result["result"].(map[string]any); res["isError"] != true {
		t.Errorf("failing_job: %+v", done.Result)
	}
	r, _, _ = send(t, g, taskCall(t, "tools/call", `"name":"protocol_error_job","arguments":{}`, true))
	done = waitStatus(t, g, r.Result["taskId"].(string), taskFailed)
	if done.Result["error"] == nil || done.Result["result"] != nil {
		t.Errorf("protocol_error_job: %+v", done.Result)
	}

	r, _, _ = send(t, g, taskCall(t, "tools/call", `"name":"slow_compute","arguments":{"seconds":600}`, true))
	id := r.Result["taskId"].(string)
	for range 2 { // cancelling a cancelled task is acknowledged too
		ack, _, _ := send(t, g, taskCall(t, "tasks/cancel", `"taskId":"`+id+`"`, true))
		if len(ack.Result) != 1 || ack.Result["resultType"] != "complete" {
			t.Errorf("cancel ack %+v", ack.Result)
		}
	}
	waitStatus(t, g, id, taskCancelled)
}

// TestTasksInput: a task parks in input_required; partial answers remove
// their keys, unknown keys are ignored, the last answer resumes it.
func TestTasksInput(t *testing.T) {
	t.Parallel()
	g := guard{era: eraBoth, tasks: newTaskEngine()}
	r, _, _ := send(t, g, taskCall(t, "tools/call", `"name":"multi_input","arguments":{}`, true))
	id := r.Result["taskId"].(string)
	parked := waitStatus(t, g, id, taskInputRequired)
	if reqs, _ := parked.Result["inputRequests"].(map[string]any); len(reqs) != 2 {
		t.Fatalf("input requests %+v", parked.Result["inputRequests"])
	}
	answer := `{"action":"accept","content":{"name":"Ada","confirm":true}}`
	ack, _, _ := send(t, g, taskCall(t, "tasks/update", `"taskId":"`+id+`","inputResponses":{"first":`+answer+`,"bogus":{"x":1}}`, true))
	if ack.Result["resultType"] != "complete" {
		t.Errorf("update ack %+v", ack.Result)
	}
	parked = waitStatus(t, g, id, taskInputRequired)
	if reqs, _ := parked.Result["inputRequests"].(map[string]any); len(reqs) != 1 || reqs["second"] == nil {
		t.Fatalf("after a partial answer: %+v", parked.Result["inputRequests"])
	}
	send(t, g, taskCall(t, "tasks/update", `"taskId":"`+id+`","inputResponses":{"second":`+answer+`}`, true))
	waitStatus(t, g, id, taskCompleted)

	// MRTR first, then a task: round 1 asks, round 2 creates the task.
	r, _, _ = send(t, g, taskCall(t, "tools/call", `"name":"test_tool_with_task","arguments":{}`, true))
	if r.Result["resultType"] != "input_required" || r.Result["taskId"] != nil {
		t.Fatalf("round 1 %+v", r.Result)
	}
	r, _, _ = send(t, g, taskCall(t, "tools/call", `"name":"test_tool_with_task","arguments":{},"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}`, true))
	done := waitStatus(t, g, r.Result["taskId"].(string), taskCompleted)
	if b, _ := json.Marshal(done.Result["result"]); !strings.Contains(string(b), "Alice") {
		t.Errorf("result %s lacks the name gathered by MRTR", b)
	}
}

// TestTasksRefusals: without the extension the tasks methods and the
// task-only tools get -32021, task-capable tools go to mcp-go; a wrong
// Mcp-Name is -32020; an unknown task -32602; a 2025 request is handed on.
func TestTasksRefusals(t *testing.T) {
	t.Parallel()
	g := guard{era: eraBoth, tasks: newTaskEngine()}
	code := func(c rpcCall) int {
		r, _, ok := send(t, g, c)
		if !ok {
			return 0
		}
		if r.Error == nil {
			return 1
		}
		return r.Error.Code
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		if c := code(taskCall(t, method, `"taskId":"t"`, false)); c != -32021 {
			t.Errorf("%s without the extension: %d", method, c)
		}
	}
	if c := code(taskCall(t, "tools/call", `"name":"failing_job","arguments":{}`, false)); c != -32021 {
		t.Errorf("task-only tool without the extension: %d", c)
	}
	if c := code(taskCall(t, "tools/call", `"name":"slow_compute","arguments":{"seconds":0}`, false)); c != 0 {
		t.Errorf("task-capable tool without the extension was not handed on to mcp-go: %d", c)
	}
	if c := code(taskCall(t, "tasks/get", `"taskId":"task-nope"`, true)); c != -32602 {
		t.Errorf("unknown task: %d", c)
	}
	if c := code(taskCall(t, "tasks/get", `"taskId":""`, true)); c != -32602 {
		t.Errorf("empty taskId: %d", c)
	}
	c := taskCall(t, "tasks/get", `"taskId":"t1"`, true)
	c.h.Set("Mcp-Name", "t2")
	if c := code(c); c != -32020 {
		t.Errorf("Mcp-Name naming another task: %d", c)
	}
	c = taskCall(t, "tools/call", `"name":"slow_compute","arguments":{"seconds":0}`, true)
	c.h.Set("Mcp-Method", "tasks/get")
	if c := code(c); c != -32020 {
		t.Errorf("Mcp-Method not the body's method: %d", c)
	}
	if _, _, ok := g.answer([]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}`), nil); ok {
		t.Error("a 2025 tasks/get was not handed on to mcp-go")
	}
}

// TestTasksBounded: the tasks held are capped however many are created.
func TestTasksBounded(t *testing.T) {
	t.Parallel()
	e := newTaskEngine()
	for range maxTasks + 50 {
		e.start(func(ctx context.Context, _ *task) (any, map[string]any) { <-ctx.Done(); return nil, errCancelled })
	}
	e.mu.Lock()
	n := len(e.tasks)
	e.mu.Unlock()
	if n > maxTasks {
		t.Errorf("%d tasks held, cap %d", n, maxTasks)
	}
}
