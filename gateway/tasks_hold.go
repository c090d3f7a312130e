package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/state"
)

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
	// A client that declared the tool-approval extension (SEP-2848,
	// tasks_approval.go) is told more in _meta; the task is the same.
	approval := h.req.HasExtension(mcpwire.ExtensionToolApproval)
	ttl := h.g.approvals.TTL() + time.Minute
	msg := "waiting for approval " + r.ID + ": an operator approves it with " + h.g.approveHint(r.ID)
	t, err := store.CreateTask(ctx, state.Task{Agent: h.agent, Surface: h.surface, Action: r.Action, ArgsSHA256: r.ArgsSHA256,
		Revision: r.Revision, Generation: r.Generation, ApprovalID: r.ID, Status: state.TaskWorking, StatusMessage: msg}, ttl)
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
		switch {
		case approval:
			u = approvalOutcome(res)
		case res.RPCError != nil:
			u = state.TaskUpdate{Status: state.TaskFailed, Result: res.RPCError, StatusMessage: "the server answered with an error"}
		}
		if _, err := store.UpdateTask(context.WithoutCancel(bctx), h.agent, t.ID, u); err != nil && !errors.Is(err, state.ErrTaskFinal) {
			h.g.log.Error("task result not stored", "agent", h.agent, "task", t.ID, "err", err)
		}
	}()
	if approval {
		return pendingTask(taskJSON(t, "task", nil), "This call is waiting for an operator's approval; its result will be on the task. You can continue other work and check back."), true
	}
	return taskJSON(t, "task", nil), true
}

// shapeDenial implements denialShaper: a refusal for a client that
// declared the tool-approval extension carries the denial envelope.
func (h modernHold) shapeDenial(result []byte) []byte {
	if !h.req.HasExtension(mcpwire.ExtensionToolApproval) {
		return result
	}
	return refusedForApprovalClient(result)
}

// AskUser implements callpipe.Holder for clients that declared
// elicitation.
func (h modernHold) AskUser(_ context.Context, _ approvals.Request, question, sealed string) ([]byte, bool) {
	if jsonrpc.Field(h.req.Capabilities, "elicitation") == nil {
		return nil, false
	}
	b := []byte(`{"inputRequests":{`)
	b = appendJSONString(b, callpipe.ApprovalInputKey)
	b = append(b, `:{"method":"elicitation/create","params":{"message":`...)
	b = appendJSONString(b, question)
	b = append(b, `,"mode":"form","requestedSchema":{"properties":{"approve":{"description":"Approve this call once","title":"Approve","type":"boolean"}},"required":["approve"],"type":"object"}}}},"requestState":`...)
	b = appendJSONString(b, sealed)
	return append(b, `,"resultType":"input_required"}`...), true
}
