package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/mcpserve"
)

// TestAskUser: a held call is put to the caller's own user only when its
// client declared elicitation, as an input-required result carrying the
// sealed state (the question's markup as written).
func TestAskUser(t *testing.T) {
	t.Parallel()
	h := modernHold{agent: "a", surface: "vault", provider: callpipe.Command}
	if _, ok := h.AskUser(context.Background(), approvals.Request{}, "q", "state"); ok {
		t.Fatal("asked a client that declared no elicitation")
	}
	h.req = mcpserve.Request{Capabilities: json.RawMessage(`{"elicitation":{}}`)}
	b, ok := h.AskUser(context.Background(), approvals.Request{}, "Approve <stash> & go?", "sealed==")
	if !ok || !json.Valid(b) {
		t.Fatalf("AskUser = %s, %v", b, ok)
	}
	var r struct {
		InputRequests map[string]struct {
			Method string
			Params struct{ Message, Mode string }
		}
		RequestState, ResultType string
	}
	if err := json.Unmarshal(b, &r); err != nil || r.ResultType != "input_required" || r.RequestState != "sealed==" ||
		r.InputRequests[callpipe.ApprovalInputKey].Method != "elicitation/create" || r.InputRequests[callpipe.ApprovalInputKey].Params.Message != "Approve <stash> & go?" {
		t.Errorf("input-required result %s", b)
	}
	if !strings.Contains(string(b), "Approve <stash> & go?") {
		t.Errorf("the question is HTML-escaped: %s", b)
	}
}

// TestTaskNeedsTheExtension: without the tasks extension a held call is
// not made a task (it waits, as in the session era).
func TestTaskNeedsTheExtension(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	h := modernHold{g: g, agent: "reader", surface: "json-tools", provider: callpipe.Command}
	if _, ok := h.Task(context.Background(), approvals.Request{}, func(context.Context) callpipe.Result {
		t.Error("resumed without a task")
		return callpipe.Result{}
	}); ok {
		t.Error("a task for a client without the extension")
	}
}
