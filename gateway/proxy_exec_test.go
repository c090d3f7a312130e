package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
)

// TestProxyRunOutcome: what the audit and the client get from each way a
// forwarded call can end. The forward function is the seam the relay
// (mcpproxy, tested there) fills; here it answers each case directly.
func TestProxyRunOutcome(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	call, err := callpipe.ParseCall([]byte(`{"name":"echo","arguments":{"text":"<x>"}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name           string
		result, rpcErr json.RawMessage
		err            error
		wantErr        string // the audit's error
		wantResult     string // in the result for the client
	}{
		{"result", json.RawMessage(`{"content":[{"type":"text","text":"<x>"}]}`), nil, nil, "", `"text":"<x>"`},
		{"tool error", json.RawMessage(`{"content":[],"isError":true}`), nil, nil, "the tool reported an error", `"isError":true`},
		{"JSON-RPC error", nil, json.RawMessage(`{"code":-32602,"message":"bad"}`), nil, "JSON-RPC error -32602: bad", ""},
		{"unreachable", nil, nil, errors.New("broken pipe"), "broken pipe", "conf:echo failed: broken pipe"},
	}
	for _, c := range cases {
		var sent []byte
		x := proxyExecutor{g: g, server: "conf", forward: func(_ context.Context, name string, params []byte) (json.RawMessage, json.RawMessage, error) {
			sent = params
			return c.result, c.rpcErr, c.err
		}}
		run, err := x.Prepare(context.Background(), call)
		if err != nil {
			t.Fatal(err)
		}
		out := run.Execute(context.Background(), audit.Event{})
		if !strings.Contains(out.Error, c.wantErr) || (c.wantErr == "") != (out.Error == "") {
			t.Errorf("%s: audit error %q, want %q", c.name, out.Error, c.wantErr)
		}
		if !strings.Contains(string(out.Result), c.wantResult) || (c.rpcErr != nil) != (out.RPCError != nil) {
			t.Errorf("%s: result %s rpc %s", c.name, out.Result, out.RPCError)
		}
		if string(sent) != `{"arguments":{"text":"\u003cx\u003e"},"name":"echo"}` {
			t.Errorf("%s: forwarded %s, want the decided call re-encoded", c.name, sent)
		}
	}
	if _, err := (proxyExecutor{g: g, server: "conf"}).Prepare(context.Background(), call); !errors.Is(err, errNoID) {
		t.Errorf("no way to forward: %v", err)
	}
}

func TestIsErrorResult(t *testing.T) {
	t.Parallel()
	for r, want := range map[string]bool{`{"isError":true}`: true, `{"isError":false}`: false, `{"content":[{"isError":true}]}`: false, `{}`: false, `x`: false} {
		if got := isErrorResult(json.RawMessage(r)); got != want {
			t.Errorf("isErrorResult(%s) = %v", r, got)
		}
	}
}
