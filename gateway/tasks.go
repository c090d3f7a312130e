package gateway

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/state"
)

// taskPoll is the polling interval suggested to a client holding a task.
const taskPoll = 1000

// taskStore is where tasks live: the deployment's shared store.
func (g *Gateway) taskStore() state.Tasks { return g.store }

// taskJSON is a task as the tasks extension shows it: a CreateTaskResult
// (resultType "task") or a GetTaskResult (resultType "complete", with the
// result or error of a finished task).
func taskJSON(t state.Task, resultType string, id *string) []byte {
	taskID := t.ID
	if id != nil {
		taskID = *id
	}
	f := jsonrpc.Fields{
		{Key: "createdAt", Value: jsonString(t.Created.UTC().Format(time.RFC3339Nano))},
		{Key: "lastUpdatedAt", Value: jsonString(t.Updated.UTC().Format(time.RFC3339Nano))},
		{Key: "pollIntervalMs", Value: json.RawMessage(strconv.Itoa(taskPoll))},
		{Key: "resultType", Value: jsonString(resultType)},
		{Key: "status", Value: jsonString(string(t.Status))},
		{Key: "taskId", Value: jsonString(taskID)},
		{Key: "ttlMs", Value: json.RawMessage(strconv.FormatInt(time.Until(t.Expires).Milliseconds(), 10))},
	}
	if t.StatusMessage != "" {
		f = f.Set("statusMessage", jsonString(t.StatusMessage))
	}
	if resultType == "complete" {
		switch t.Status {
		case state.TaskCompleted:
			f = f.Set("result", t.Result)
		case state.TaskFailed:
			f = f.Set("error", t.Result)
		}
	}
	return f.Encode()
}

// taskOp answers tasks/get, tasks/update and tasks/cancel for agent on a
// surface. A task belongs to the agent that created it: another agent's
// task gets the same answer as an unknown one. Every operation is audited.
// A task a downstream server created is asked there (forward), under the
// server's own id.
func (g *Gateway) taskOp(ctx context.Context, agent string, provider callpipe.Provider, surface string, m *jsonrpc.Message, req mcpserve.Request,
	forward func(ctx context.Context, params json.RawMessage) (json.RawMessage, json.RawMessage, error)) (json.RawMessage, json.RawMessage) {
	op := m.Method[len("tasks/"):]
	ev := callpipe.NewEvent(agent, provider, callpipe.VerbTask, surface, op)
	var id string
	_ = json.Unmarshal(jsonrpc.Field(m.Params, "taskId"), &id)
	ev.Reason = "task " + id
	notFound := func() (json.RawMessage, json.RawMessage) {
		ev.Decision = "deny"
		ev.Reason += ": no such task of this agent"
		_ = g.pipe.Journal().Append(ev)
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeInvalidParams, "Failed to retrieve task: Task not found")
	}
	store := g.taskStore()
	if !req.HasExtension(mcpwire.ExtensionTasks) {
		ev.Decision, ev.Reason = "deny", ev.Reason+": the client did not declare "+mcpwire.ExtensionTasks
		_ = g.pipe.Journal().Append(ev)
		f, _ := jsonrpc.ParseFields(jsonrpc.ErrorObject(-32021, "Missing required client capability: "+mcpwire.ExtensionTasks))
		return nil, f.Set("data", json.RawMessage(`{"requiredCapabilities":{"extensions":{"`+mcpwire.ExtensionTasks+`":{}}}}`)).Encode()
	}
	if store == nil || id == "" {
		return notFound()
	}
	t, err := store.GetTask(ctx, agent, id)
	if err != nil || t.Surface != surface {
		return notFound()
	}
	ev.Decision = "allow"
	if err := g.pipe.Journal().Append(ev); err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeInternalError, "the audit log could not be written: "+err.Error())
	}
	if t.DownstreamTask != "" && forward != nil {
		f, _ := jsonrpc.ParseFields(m.Params)
		result, rpcErr, err := forward(ctx, f.Set("taskId", jsonString(t.DownstreamTask)).Encode())
		if err != nil {
			return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, err.Error())
		}
		if result != nil && jsonrpc.Field(result, "taskId") != nil {
			rf, _ := jsonrpc.ParseFields(result)
			result = rf.Set("taskId", jsonString(t.ID)).Encode()
		}
		return result, rpcErr
	}
	switch op {
	case "get":
		if t.ApprovalID != "" && t.Status == state.TaskWorking && req.HasExtension(mcpwire.ExtensionToolApproval) {
			// SEP-2848: the envelope on every poll while the call waits.
			return pendingTask(taskJSON(t, "complete", nil), ""), nil
		}
		return taskJSON(t, "complete", nil), nil
	case "update":
		// toolgate's own tasks ask no input.
		return json.RawMessage(`{"resultType":"complete"}`), nil
	case "cancel":
		if _, err := store.CancelTask(ctx, agent, id, "cancelled by the caller"); err == nil {
			if cancel, ok := g.taskRuns.Load(id); ok {
				cancel.(context.CancelFunc)()
			}
			if t.ApprovalID != "" {
				_, _ = g.approvals.Deny(t.ApprovalID, "caller", "the caller cancelled the task")
			}
		}
		return json.RawMessage(`{"resultType":"complete"}`), nil
	}
	return nil, jsonrpc.ErrorObject(jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method)
}

// adoptTask records a task a downstream server created for agent and
// returns the CreateTaskResult with toolgate's own id in place of the
// server's, so the task is routed back to the server and to this agent
// only.
func (g *Gateway) adoptTask(ctx context.Context, agent, server string, result json.RawMessage) json.RawMessage {
	store := g.taskStore()
	var ds string
	_ = json.Unmarshal(jsonrpc.Field(result, "taskId"), &ds)
	if store == nil || ds == "" {
		return result
	}
	t, err := store.CreateTask(ctx, state.Task{Agent: agent, Surface: server, Action: "mcp:call:" + server, DownstreamServer: server, DownstreamTask: ds}, 0)
	if err != nil {
		g.log.Warn("downstream task not recorded; its id is not passed on", "server", server, "err", err)
		return callpipe.ErrorResult("toolgate could not record the task the server created: " + err.Error())
	}
	f, _ := jsonrpc.ParseFields(result)
	return f.Set("taskId", jsonString(t.ID)).Encode()
}
