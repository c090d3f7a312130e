package gateway

import (
	"encoding/json"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/state"
)

// The asynchronous tool-approval extension (SEP-2848, a draft) for
// 2026-07-28 clients that declare it. A held call already becomes a task
// (tasks_hold.go) and is decided again when it is about to run; what the
// extension adds is said in _meta, so a client that ignores it reads the
// same results as before:
//   - a call toolgate refuses carries the SEP-2643 envelope with
//     remediation "unavailable" (asking again will not help);
//   - a held call's task, and every tasks/get of it while it waits, carry
//     the envelope with remediation "available" and a task hint, and the
//     task's CreateTaskResult a model-immediate-response;
//   - a completed approval task's result carries its disposition:
//     approved-executed, denied-not-executed (refused when decided again,
//     or denied by the operator: the envelope again, and the body says the
//     tool did not run) or execution-error (it ran and failed, or the
//     server answered with an error: a side effect may have happened).
// The draft leaves open what a JSON-RPC error after the call was sent is;
// toolgate calls it execution-error, never a retryable failed task.

// Dispositions of a completed approval task (SEP-2848).
const (
	dispositionExecuted = "approved-executed"
	dispositionDenied   = "denied-not-executed"
	dispositionError    = "execution-error"
)

// Denial envelopes (SEP-2643's authorization object): while a call waits
// for an approval, and once it is refused for good.
var (
	envelopePending = json.RawMessage(`{"reason":"insufficient_authorization","remediation":"available","remediationHints":[{"type":"task"}]}`)
	envelopeRefused = json.RawMessage(`{"reason":"insufficient_authorization","remediation":"unavailable"}`)
)

// deniedNotRun is the line a refused approval task's body ends with, so a
// model whose client reads only the tasks extension knows it too.
const deniedNotRun = "The tool did not run."

// metaOf builds a _meta object from key, value pairs.
func metaOf(kv ...string) json.RawMessage {
	var f jsonrpc.Fields
	for i := 0; i+1 < len(kv); i += 2 {
		f = f.Set(kv[i], json.RawMessage(kv[i+1]))
	}
	return f.Encode()
}

// refusedForApprovalClient marks a result toolgate refused for a client
// that declared the extension.
func refusedForApprovalClient(result json.RawMessage) json.RawMessage {
	return withMeta(result, metaOf(mcpwire.MetaAuthorization, string(envelopeRefused)))
}

// pendingTask marks a held call's task (a CreateTaskResult, or a
// GetTaskResult while it waits) for a client that declared the extension.
func pendingTask(task json.RawMessage, immediate string) json.RawMessage {
	kv := []string{mcpwire.MetaAuthorization, string(envelopePending)}
	if immediate != "" {
		kv = append(kv, mcpwire.MetaModelImmediateResponse, string(jsonString(immediate)))
	}
	return withMeta(task, metaOf(kv...))
}

// approvalOutcome is what an approval task of a declaring client completes
// with: the call's result (a JSON-RPC error turned into an isError result,
// as the tool may have run) with its disposition, and for a refusal the
// envelope and a body that says the tool did not run.
func approvalOutcome(res callpipe.Result) state.TaskUpdate {
	switch {
	case res.RPCError != nil:
		msg := "the server answered with an error"
		var e struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(res.RPCError, &e) == nil && e.Message != "" {
			msg += ": " + e.Message
		}
		r := callpipe.ErrorResult(msg + "; the tool may have run.")
		return state.TaskUpdate{Status: state.TaskCompleted, StatusMessage: "the call ended in an error",
			Result: modernResult(withMeta(r, metaOf(mcpwire.MetaApprovalDisposition, `"`+dispositionError+`"`)))}
	case res.Denied:
		r := withMeta(appendText(res.JSON, deniedNotRun), metaOf(
			mcpwire.MetaApprovalDisposition, `"`+dispositionDenied+`"`,
			mcpwire.MetaAuthorization, string(envelopeRefused)))
		return state.TaskUpdate{Status: state.TaskCompleted, StatusMessage: "refused; the tool did not run", Result: modernResult(r)}
	case string(jsonrpc.Field(res.JSON, "isError")) == "true":
		r := withMeta(res.JSON, metaOf(mcpwire.MetaApprovalDisposition, `"`+dispositionError+`"`))
		return state.TaskUpdate{Status: state.TaskCompleted, StatusMessage: "the tool ran and failed", Result: modernResult(r)}
	}
	r := withMeta(res.JSON, metaOf(mcpwire.MetaApprovalDisposition, `"`+dispositionExecuted+`"`))
	return state.TaskUpdate{Status: state.TaskCompleted, StatusMessage: "done", Result: modernResult(r)}
}

// appendText returns a CallToolResult with one more text block at the end
// of its content; result unchanged when it has no content array.
func appendText(result json.RawMessage, text string) json.RawMessage {
	f, err := jsonrpc.ParseFields(result)
	if err != nil {
		return result
	}
	var content []json.RawMessage
	if json.Unmarshal(f.Get("content"), &content) != nil {
		return result
	}
	block := append(append([]byte(`{"text":`), jsonString(text)...), `,"type":"text"}`...)
	content = append(content, block)
	b := []byte{'['}
	for i, c := range content {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	return f.Set("content", append(b, ']')).Encode()
}
