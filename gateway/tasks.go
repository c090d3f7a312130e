package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/strictjson"
)

// taskPoll is the polling interval suggested to a client holding a task.
const taskPoll = 1000

// modernHold takes held calls of a 2026-07-28 client off its request: a
// task when the client declared the tasks extension (the operator
// approves; the task completes with the call's result), else an
// input-required result asking the client's own user (only what the
// pipeline lets that user approve). It implements callpipe.Holder.
type modernHold struct {
	g        *Gateway
	agent    string
	surface  string
	provider callpipe.Provider
	req      mcpserve.Request
}

// Task implements callpipe.Holder: the task is durably created before the
// handle is returned, and the resumed call runs in the background under a
// context of its own (the client's request is over), bounded by the
// approval's lifetime.
func (h modernHold) Task(ctx context.Context, r approvals.Request, resume func(context.Context) callpipe.Result) ([]byte, bool) {
	store := h.g.taskStore()
	if store == nil || !h.req.HasExtension(mcpwire.ExtensionTasks) {
		return nil, false
	}
	ttl := h.g.approvals.TTL() + time.Minute
	msg := "waiting for approval " + r.ID + ": an operator approves it with " + h.g.approveHint(r.ID)
	t, err := store.CreateTask(ctx, state.Task{Agent: h.agent, Surface: h.surface, Action: r.Action, ArgsSHA256: r.ArgsSHA256,
		Revision: r.Revision, ApprovalID: r.ID, Status: state.TaskWorking, StatusMessage: msg}, ttl)
	if err != nil {
		h.g.log.Warn("task not created; the call waits instead", "agent", h.agent, "err", err)
		return nil, false
	}
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	h.g.taskRuns.Store(t.ID, cancel)
	go func() {
		defer cancel()
		defer h.g.taskRuns.Delete(t.ID)
		res := resume(bctx)
		u := state.TaskUpdate{Status: state.TaskCompleted, Result: modernResult(res.JSON), StatusMessage: "done"}
		if res.RPCError != nil {
			u = state.TaskUpdate{Status: state.TaskFailed, Result: res.RPCError, StatusMessage: "the server answered with an error"}
		}
		if _, err := store.UpdateTask(context.WithoutCancel(bctx), h.agent, t.ID, u); err != nil && !errors.Is(err, state.ErrTaskFinal) {
			h.g.log.Error("task result not stored", "agent", h.agent, "task", t.ID, "err", err)
		}
	}()
	return taskJSON(t, "task", nil), true
}

// AskUser implements callpipe.Holder for clients that declared
// elicitation.
func (h modernHold) AskUser(_ context.Context, _ approvals.Request, question, sealed string) ([]byte, bool) {
	if jsonrpc.Field(h.req.Capabilities, "elicitation") == nil {
		return nil, false
	}
	b := []byte(`{"inputRequests":{`)
	b = strictjson.AppendString(b, callpipe.ApprovalInputKey)
	b = append(b, `:{"method":"elicitation/create","params":{"message":`...)
	b = strictjson.AppendString(b, question)
	b = append(b, `,"mode":"form","requestedSchema":{"properties":{"approve":{"description":"Approve this call once","title":"Approve","type":"boolean"}},"required":["approve"],"type":"object"}}}},"requestState":`...)
	b = strictjson.AppendString(b, sealed)
	return append(b, `,"resultType":"input_required"}`...), true
}

// taskJSON is a task as the tasks extension shows it: a CreateTaskResult
// (resultType "task") or a GetTaskResult (resultType "complete", with the
// result or error of a finished task).
func taskJSON(t state.Task, resultType string, id *string) []byte {
	taskID := t.ID
	if id != nil {
		taskID = *id
	}
	f := jsonrpc.Fields{
		{Key: "createdAt", Value: jsonrpc.Quote(t.Created.UTC().Format(time.RFC3339Nano))},
		{Key: "lastUpdatedAt", Value: jsonrpc.Quote(t.Updated.UTC().Format(time.RFC3339Nano))},
		{Key: "pollIntervalMs", Value: json.RawMessage(strconv.Itoa(taskPoll))},
		{Key: "resultType", Value: jsonrpc.Quote(resultType)},
		{Key: "status", Value: jsonrpc.Quote(string(t.Status))},
		{Key: "taskId", Value: jsonrpc.Quote(taskID)},
		{Key: "ttlMs", Value: json.RawMessage(strconv.FormatInt(time.Until(t.Expires).Milliseconds(), 10))},
	}
	if t.StatusMessage != "" {
		f = f.Set("statusMessage", jsonrpc.Quote(t.StatusMessage))
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
		result, rpcErr, err := forward(ctx, f.Set("taskId", jsonrpc.Quote(t.DownstreamTask)).Encode())
		if err != nil {
			return nil, jsonrpc.ErrorObject(jsonrpc.CodeUnavailable, err.Error())
		}
		if result != nil && jsonrpc.Field(result, "taskId") != nil {
			rf, _ := jsonrpc.ParseFields(result)
			result = rf.Set("taskId", jsonrpc.Quote(t.ID)).Encode()
		}
		return result, rpcErr
	}
	switch op {
	case "get":
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
	return f.Set("taskId", jsonrpc.Quote(t.ID)).Encode()
}
