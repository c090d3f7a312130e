package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/state"
)

const tasksWorkspace = `version: 1
gateway:
  approvals: {wait: 50ms}
command_packs:
  - id: vault
    permission: strict
    commands:
      - id: stash
        argv: [echo, stash, "{item}"]
        inputs: {type: object, properties: {item: {type: string}}, required: [item]}
        effects: write
agents:
  - {id: a, token: {env: A}, grants: [tool:vault:stash]}
  - {id: b, token: {env: B}, grants: [tool:vault:stash]}
`

const withTasks = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

// TestTasks: a held call of a client declaring the tasks extension is a
// task; its owner reads it, another agent gets the answer an unknown task
// gets, a cancel ends it and denies its approval; every operation is
// audited.
func TestTasks(t *testing.T) {
	t.Parallel()
	g := openYAML(t, tasksWorkspace, map[string]string{"A": "agent-a-token-0123456789", "B": "agent-b-token-0123456789"})
	a := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/vault", "agent-a-token-0123456789"}
	b := mcpClient{t, g.Handler(HTTPOptions{}), "/mcp/vault", "agent-b-token-0123456789"}
	created := responseTo(t, a.modernWith("1", "tools/call", "stash", `"name":"stash","arguments":{"item":"<x>"}`, withTasks).Body.Bytes(), "1")
	var task struct {
		TaskID, Status, ResultType, StatusMessage string
	}
	if err := json.Unmarshal(created, &task); err != nil || task.ResultType != "task" || task.Status != "working" || task.TaskID == "" || !strings.Contains(task.StatusMessage, "toolgate approvals") {
		t.Fatalf("held call: %s", created)
	}
	taskParams := `"taskId":"` + task.TaskID + `"`
	got := responseTo(t, a.modernWith("2", "tasks/get", "", taskParams, withTasks).Body.Bytes(), "2")
	if string(jsonrpc.Field(got, "taskId")) != `"`+task.TaskID+`"` || string(jsonrpc.Field(got, "resultType")) != `"complete"` {
		t.Errorf("tasks/get by its owner: %s", got)
	}
	other := b.modernWith("3", "tasks/get", "", taskParams, withTasks)
	unknown := a.modernWith("4", "tasks/get", "", `"taskId":"nope"`, withTasks)
	if !strings.Contains(other.Body.String(), "Task not found") || strings.ReplaceAll(other.Body.String(), `"id":3`, `"id":4`) != unknown.Body.String() {
		t.Errorf("another agent's task %s, an unknown one %s: want the same answer", other.Body, unknown.Body)
	}
	if res := responseTo(t, a.modernWith("5", "tasks/cancel", "", taskParams, withTasks).Body.Bytes(), "5"); string(res) != `{"resultType":"complete"}` {
		t.Errorf("tasks/cancel: %s", res)
	}
	waitForCond(t, 10*time.Second, "the task to be cancelled and its approval denied", func() bool {
		pending, _ := g.approvals.PendingContext(t.Context())
		tk, err := g.store.GetTask(t.Context(), "a", task.TaskID)
		return len(pending) == 0 && err == nil && tk.Status == state.TaskCancelled
	})
	var ops []string
	for _, ev := range events(t, g) {
		if strings.HasPrefix(ev.Action, "command:task:") {
			ops = append(ops, ev.Agent+" "+ev.Action+" "+ev.Decision)
		}
	}
	if strings.Join(ops, ",") != "a command:task:vault:get allow,b command:task:vault:get deny,a command:task:vault:get deny,a command:task:vault:cancel allow" {
		t.Errorf("audited task operations %v", ops)
	}
}

func TestTaskJSON(t *testing.T) {
	t.Parallel()
	now := time.Now()
	tk := state.Task{ID: "t1", Status: state.TaskCompleted, Result: json.RawMessage(`{"content":[]}`), StatusMessage: "<done>", Created: now, Updated: now, Expires: now.Add(time.Minute)}
	created := taskJSON(tk, "task", nil)
	if jsonrpc.Field(created, "result") != nil || string(jsonrpc.Field(created, "statusMessage")) != `"<done>"` || string(jsonrpc.Field(created, "pollIntervalMs")) != "1000" {
		t.Errorf("CreateTaskResult %s", created)
	}
	id := "own-id"
	done := taskJSON(tk, "complete", &id)
	if string(jsonrpc.Field(done, "result")) != `{"content":[]}` || string(jsonrpc.Field(done, "taskId")) != `"own-id"` {
		t.Errorf("GetTaskResult %s", done)
	}
	tk.Status = state.TaskFailed
	if failed := taskJSON(tk, "complete", nil); string(jsonrpc.Field(failed, "error")) != `{"content":[]}` || jsonrpc.Field(failed, "result") != nil {
		t.Errorf("failed task %s", failed)
	}
}
