package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// The tasks extension (SEP-2663, io.modelcontextprotocol/tasks) of
// 2026-07-28, which mcp-go v1.2.1 does not implement (its tasks are the
// 2025-11-25 experimental ones: tasks/result, tasks/list, params.task).
// The guard serves it before mcp-go: a 2026-07-28 tools/call of a task
// tool from a client that declared the extension creates a task (a flat
// CreateTaskResult, resultType "task"), and tasks/get, tasks/update and
// tasks/cancel work on it. Without the extension the same tools run
// synchronously through mcp-go (tasktools.go), except the ones that
// require a task, which get -32021.

// tasksExtension is the extension's capability key.
const tasksExtension = "io.modelcontextprotocol/tasks"

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

const (
	taskTTL          = 5 * time.Minute
	taskPollInterval = 100 * time.Millisecond
	// maxTasks bounds the tasks held at once; the oldest finished one
	// goes first.
	maxTasks = 1000
)

// taskBody is what a task runs; it returns the inlined result, or a
// JSON-RPC error object (the task then fails).
type taskBody func(ctx context.Context, t *task) (result any, rpcErr map[string]any)

// task is one task's state, guarded by the engine's mutex.
type task struct {
	engine           *taskEngine
	id               string
	status           string
	created, updated time.Time
	result           any
	rpcErr           map[string]any
	pending          map[string]json.RawMessage // input requests not yet answered
	answers          map[string]json.RawMessage
	wake             chan struct{} // signalled when every pending request is answered
	cancel           context.CancelFunc
}

// taskEngine holds the tasks of this server process.
type taskEngine struct {
	mu    sync.Mutex
	tasks map[string]*task
	order []string // ids, oldest first
}

func newTaskEngine() *taskEngine { return &taskEngine{tasks: map[string]*task{}} }

func terminal(status string) bool {
	return status == taskCompleted || status == taskFailed || status == taskCancelled
}

// start creates a task running body and returns it once tasks/get can see
// it (a CreateTaskResult is only sent for a task that exists).
func (e *taskEngine) start(body taskBody) *task {
	raw := make([]byte, 12)
	_, _ = rand.Read(raw)
	ctx, cancel := context.WithTimeout(context.Background(), taskTTL)
	now := time.Now().UTC()
	t := &task{engine: e, id: "task-" + hex.EncodeToString(raw), status: taskWorking, created: now, updated: now,
		wake: make(chan struct{}, 1), cancel: cancel}
	e.mu.Lock()
	e.evictLocked()
	e.tasks[t.id] = t
	e.order = append(e.order, t.id)
	e.mu.Unlock()
	go func() {
		defer cancel()
		result, rpcErr := body(ctx, t)
		e.mu.Lock()
		defer e.mu.Unlock()
		if terminal(t.status) {
			return // cancelled meanwhile
		}
		if rpcErr != nil {
			t.status, t.rpcErr = taskFailed, rpcErr
		} else {
			t.status, t.result = taskCompleted, result
		}
		t.pending = nil
		t.updated = time.Now().UTC()
	}()
	return t
}

// evictLocked makes room for a new task: expired ones go, then the oldest.
func (e *taskEngine) evictLocked() {
	now := time.Now()
	keep := e.order[:0]
	for _, id := range e.order {
		if t := e.tasks[id]; now.Sub(t.created) > taskTTL || (len(e.tasks) >= maxTasks && terminal(t.status)) {
			delete(e.tasks, id)
			continue
		}
		keep = append(keep, id)
	}
	e.order = keep
	for len(e.tasks) >= maxTasks {
		id := e.order[0]
		e.order = e.order[1:]
		if t := e.tasks[id]; t != nil {
			t.cancel()
		}
		delete(e.tasks, id)
	}
}

func (e *taskEngine) get(id string) (*task, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.tasks[id]
	if ok && time.Since(t.created) > taskTTL {
		return nil, false
	}
	return t, ok
}

// ask parks the task in input_required with requests until every one is
// answered through tasks/update (in one update or several), and returns
// the answers.
func (t *task) ask(ctx context.Context, requests map[string]any) (map[string]json.RawMessage, error) {
	e := t.engine
	e.mu.Lock()
	if terminal(t.status) {
		e.mu.Unlock()
		return nil, errors.New("task ended")
	}
	t.pending, t.answers = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for k, r := range requests {
		b, _ := json.Marshal(r)
		t.pending[k] = b
	}
	t.status, t.updated = taskInputRequired, time.Now().UTC()
	e.mu.Unlock()
	select {
	case <-t.wake:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return t.answers, nil
}

// update delivers input responses; keys the task did not ask for are
// ignored.
func (t *task) update(responses map[string]json.RawMessage) {
	e := t.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.status != taskInputRequired {
		return
	}
	for k, v := range responses {
		if _, asked := t.pending[k]; asked {
			t.answers[k] = v
			delete(t.pending, k)
		}
	}
	if len(t.pending) == 0 {
		t.status, t.updated = taskWorking, time.Now().UTC()
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// cancelTask moves a running task to cancelled; a finished one is left
// as it is (cancelling it again is acknowledged all the same).
func (t *task) cancelTask() {
	e := t.engine
	e.mu.Lock()
	defer e.mu.Unlock()
	if terminal(t.status) {
		return
	}
	t.status, t.pending, t.updated = taskCancelled, nil, time.Now().UTC()
	t.cancel()
}

// envelope is the Task fields common to CreateTaskResult and DetailedTask.
func (t *task) envelopeLocked(resultType string) map[string]any {
	return map[string]any{
		"resultType":     resultType,
		"taskId":         t.id,
		"status":         t.status,
		"createdAt":      t.created.Format(time.RFC3339Nano),
		"lastUpdatedAt":  t.updated.Format(time.RFC3339Nano),
		"ttlMs":          taskTTL.Milliseconds(),
		"pollIntervalMs": taskPollInterval.Milliseconds(),
	}
}

// createResult is the CreateTaskResult.
func (t *task) createResult() map[string]any {
	t.engine.mu.Lock()
	defer t.engine.mu.Unlock()
	return t.envelopeLocked("task")
}

// detailed is the DetailedTask tasks/get returns: the result or error
// inlined once terminal, the pending input requests while waiting.
func (t *task) detailed() map[string]any {
	t.engine.mu.Lock()
	defer t.engine.mu.Unlock()
	m := t.envelopeLocked("complete")
	switch t.status {
	case taskCompleted:
		m["result"] = t.result
	case taskFailed:
		m["error"] = t.rpcErr
	case taskInputRequired:
		reqs := map[string]json.RawMessage{}
		for k, v := range t.pending {
			reqs[k] = v
		}
		m["inputRequests"] = reqs
	}
	return m
}

// declaresTasks reports whether a 2026-07-28 request's client
// capabilities name the tasks extension.
func declaresTasks(meta map[string]json.RawMessage) bool {
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	_ = json.Unmarshal(meta[mcp.MetaKeyClientCapabilities], &caps)
	_, ok := caps.Extensions[tasksExtension]
	return ok
}

func missingTasksCapability(id json.RawMessage, what string) []byte {
	return rpcError(id, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, what+" needs the client capability extensions."+tasksExtension,
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}})
}

func rpcResult(id json.RawMessage, result any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	return b
}

// headerMismatch checks, over HTTP, the standard headers of a request the
// guard serves itself (mcp-go checks the others): MCP-Protocol-Version
// equal to the _meta version, Mcp-Method equal to the method, Mcp-Name
// equal to the name the method routes on. h is nil over stdio.
func headerMismatch(h http.Header, req guardedRequest, version, name string) string {
	if h == nil {
		return ""
	}
	switch {
	case h.Get(mcp.HeaderProtocolVersion) != version:
		return mcp.HeaderProtocolVersion + " header does not match _meta " + mcp.MetaKeyProtocolVersion
	case h.Get(mcp.HeaderMethod) != req.Method:
		return mcp.HeaderMethod + " header does not match the request's method"
	case h.Get(mcp.HeaderName) != name:
		field := "params.name"
		if req.Method != string(mcp.MethodToolsCall) {
			field = "params.taskId"
		}
		return mcp.HeaderName + " header does not match the request's " + field
	}
	return ""
}

// answerTasks serves the tasks surface of a 2026-07-28 request, or
// returns ok=false for mcp-go to serve it.
func (g guard) answerTasks(msg []byte, h http.Header, req guardedRequest, version string) (reply []byte, status int, ok bool) {
	switch req.Method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	case string(mcp.MethodToolsCall):
		tool, isTaskTool := taskTools()[req.Params.Name]
		if !isTaskTool || (!tool.required && !declaresTasks(req.Params.Meta)) {
			return nil, 0, false // synchronous, through mcp-go
		}
		if m := headerMismatch(h, req, version, req.Params.Name); m != "" {
			return rpcError(req.ID, mcp.HEADER_MISMATCH, m, nil), http.StatusBadRequest, true
		}
		if !declaresTasks(req.Params.Meta) {
			return missingTasksCapability(req.ID, req.Params.Name), http.StatusBadRequest, true
		}
		var call struct {
			Params struct {
				Arguments      map[string]any             `json:"arguments"`
				InputResponses map[string]json.RawMessage `json:"inputResponses"`
			} `json:"params"`
		}
		if err := json.Unmarshal(msg, &call); err != nil {
			return rpcError(req.ID, mcp.INVALID_PARAMS, "params: "+err.Error(), nil), http.StatusBadRequest, true
		}
		if pre, ok := tool.before(call.Params.InputResponses); ok {
			return rpcResult(req.ID, pre), http.StatusOK, true // an MRTR round before the task
		}
		t := g.tasks.start(tool.body(call.Params.Arguments, call.Params.InputResponses))
		return rpcResult(req.ID, t.createResult()), http.StatusOK, true
	default:
		return nil, 0, false
	}
	if m := headerMismatch(h, req, version, req.Params.TaskID); m != "" {
		return rpcError(req.ID, mcp.HEADER_MISMATCH, m, nil), http.StatusBadRequest, true
	}
	if !declaresTasks(req.Params.Meta) {
		return missingTasksCapability(req.ID, req.Method), http.StatusBadRequest, true
	}
	var params struct {
		Params struct {
			TaskID         string                     `json:"taskId"`
			InputResponses map[string]json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	if err := json.Unmarshal(msg, &params); err != nil || params.Params.TaskID == "" {
		return rpcError(req.ID, mcp.INVALID_PARAMS, "params.taskId: a string is required", nil), http.StatusBadRequest, true
	}
	t, found := g.tasks.get(params.Params.TaskID)
	if !found {
		return rpcError(req.ID, mcp.INVALID_PARAMS, "unknown task "+params.Params.TaskID, nil), http.StatusBadRequest, true
	}
	switch req.Method {
	case "tasks/get":
		return rpcResult(req.ID, t.detailed()), http.StatusOK, true
	case "tasks/update":
		t.update(params.Params.InputResponses)
	default:
		t.cancelTask()
	}
	return rpcResult(req.ID, map[string]any{"resultType": "complete"}), http.StatusOK, true
}
