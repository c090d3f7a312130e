package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/state"
)

func TestApprovalOutcome(t *testing.T) {
	t.Parallel()
	ok := callpipe.ToolResult{Text: "stored"}.JSON()
	failed := callpipe.ErrorResult("exit 1")
	denied := callpipe.ErrorResult(callpipe.DeniedPrefix + "the grant changed in a reload")
	for _, c := range []struct {
		name        string
		res         callpipe.Result
		disposition string
		envelope    bool
		body        string
	}{
		{"executed", callpipe.Result{JSON: ok}, dispositionExecuted, false, "stored"},
		{"ran and failed", callpipe.Result{JSON: failed}, dispositionError, false, "exit 1"},
		{"refused when decided again", callpipe.Result{JSON: denied, Denied: true}, dispositionDenied, true, deniedNotRun},
		{"server error", callpipe.Result{RPCError: json.RawMessage(`{"code":-32603,"message":"boom"}`)}, dispositionError, false, "may have run"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			u := approvalOutcome(c.res)
			if u.Status != state.TaskCompleted {
				t.Fatalf("status %s: an approval task completes (never a retryable failed)", u.Status)
			}
			var r struct {
				Meta       map[string]json.RawMessage `json:"_meta"`
				ResultType string                     `json:"resultType"`
				Content    []struct{ Text string }    `json:"content"`
			}
			if err := json.Unmarshal(u.Result, &r); err != nil {
				t.Fatalf("result %s: %v", u.Result, err)
			}
			if got := string(r.Meta["io.modelcontextprotocol/tool-approval-disposition"]); got != `"`+c.disposition+`"` {
				t.Errorf("disposition %s, want %s", got, c.disposition)
			}
			if _, has := r.Meta["io.modelcontextprotocol/authorization"]; has != c.envelope {
				t.Errorf("envelope present %v, want %v: %s", has, c.envelope, u.Result)
			}
			if r.ResultType != "complete" || !strings.Contains(string(u.Result), c.body) {
				t.Errorf("result %s: want resultType complete and %q in the body", u.Result, c.body)
			}
		})
	}
}

func TestApprovalEnvelopes(t *testing.T) {
	t.Parallel()
	task := json.RawMessage(`{"_meta":{"x":1},"status":"working","taskId":"tk-1"}`)
	got := string(pendingTask(task, "waiting"))
	want := `{"_meta":{"x":1,"io.modelcontextprotocol/authorization":{"reason":"insufficient_authorization","remediation":"available","remediationHints":[{"type":"task"}]},"io.modelcontextprotocol/model-immediate-response":"waiting"},"status":"working","taskId":"tk-1"}`
	if got != want {
		t.Errorf("pendingTask:\n got %s\nwant %s", got, want)
	}
	got = string(refusedForApprovalClient(json.RawMessage(`{"content":[],"isError":true}`)))
	want = `{"content":[],"isError":true,"_meta":{"io.modelcontextprotocol/authorization":{"reason":"insufficient_authorization","remediation":"unavailable"}}}`
	if got != want {
		t.Errorf("refused:\n got %s\nwant %s", got, want)
	}
	// Not an object, or hostile content: left as it is.
	for _, in := range []string{`[1]`, `{"content":"not an array"}`} {
		if got := string(appendText(json.RawMessage(in), "x")); got != in {
			t.Errorf("appendText(%s) = %s, want it unchanged", in, got)
		}
	}
}

func TestWithGatewayExtensions(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{"capabilities":{"tools":{}}}`, `{"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/tool-approval":{}}}}`},
		{`{"capabilities":{"extensions":{"a.b/c":{"v":1}}}}`, `{"capabilities":{"extensions":{"a.b/c":{"v":1},"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/tool-approval":{}}}}`},
		{`{}`, `{"capabilities":{"extensions":{"io.modelcontextprotocol/tasks":{},"io.modelcontextprotocol/tool-approval":{}}}}`},
	} {
		if got := string(withGatewayExtensions(json.RawMessage(c.in))); got != c.want {
			t.Errorf("withGatewayExtensions(%s):\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
