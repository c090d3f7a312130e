package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/tracing"
)

// errNoID refuses a tools/call that cannot be answered.
var errNoID = errors.New("tools/call was sent without an id (as a notification, or with \"id\": null); a call must be a request")

// callServerTool runs one proxied tools/call through the pipeline. The
// server receives only the params the pipeline decided on, re-encoded
// from the parsed call — never the client's bytes — and a refused call
// never reaches it. It returns the result for the client, or the server's
// JSON-RPC error as is.
func (g *Gateway) callServerTool(ctx context.Context, agent, server string, tc mcpproxy.ToolCall, hold callpipe.Holder) (json.RawMessage, json.RawMessage) {
	req := callpipe.Request{Agent: agent, Provider: callpipe.MCP, Surface: server, Exec: proxyExecutor{g: g, forward: tc.Forward, server: server}, Hold: hold}
	call, err := callpipe.ParseCall(tc.Params)
	switch {
	case err != nil:
		req.ParseErr, req.Name = err, toolNameOf(tc.Params)
	case !jsonrpc.HasID(tc.ID):
		req.ParseErr, req.Name = errNoID, call.Name
	default:
		req.Call = call
		req.Asker = newAsker(tc.Client, tc.ID, call.ProgressToken())
		req.Protocol = tc.Client.Version
		var span trace.Span
		ctx, span = g.startCallSpan(ctx, call, agent, server)
		defer span.End()
		req.TraceID = tracing.TraceID(ctx)
	}
	res := g.pipe.Call(ctx, req)
	return res.JSON, res.RPCError
}

// proxyExecutor forwards allowed calls to a downstream session.
type proxyExecutor struct {
	g       *Gateway
	server  string
	forward func(ctx context.Context, name string, params []byte) (result, rpcErr json.RawMessage, err error)
}

// Prepare refuses a tool whose definition is not pinned (when a lock is in
// force); otherwise there is nothing to check for a proxied tool: the
// server decides whether it can run it.
func (x proxyExecutor) Prepare(_ context.Context, call *callpipe.Call) (callpipe.Run, error) {
	if x.forward == nil {
		return nil, errNoID
	}
	if rev := x.g.rev.Load(); rev.lock != nil {
		var live pin.Digest
		if ps := x.g.proxy.server(x.server); ps != nil {
			live = ps.digestOf(call.Name)
		}
		if ok, err := rev.pinned(x.server, call.Name, live); !ok {
			return nil, err
		}
	}
	return &proxyRun{x: x, call: call}, nil
}

type proxyRun struct {
	x    proxyExecutor
	call *callpipe.Call
}

func (r *proxyRun) Preview() []string { return nil }
func (r *proxyRun) Discard()          {}

// Execute forwards the decided call and reads what the audit records
// from the answer: its size, and whether the tool reported an error.
func (r *proxyRun) Execute(ctx context.Context, _ audit.Event) callpipe.Outcome {
	g := r.x.g
	ctx, span := g.tracer.StartDownstream(ctx, tracing.Downstream{Server: r.x.server, Method: "tools/call", Tool: r.call.Name})
	defer span.End()
	params := r.call.AppendParams(nil, g.forwardedMeta(ctx, r.call))
	start := time.Now()
	result, rpcErr, err := r.x.forward(ctx, r.call.Name, params)
	out := callpipe.Outcome{Duration: time.Since(start)}
	switch {
	case err != nil:
		out.Error = err.Error()
		out.Result = callpipe.ErrorResult(fmt.Sprintf("%s:%s failed: %v", r.x.server, r.call.Name, err))
	case rpcErr != nil:
		e := jsonrpc.ParseError(rpcErr)
		out.Error = fmt.Sprintf("server answered with JSON-RPC error %d: %s", e.Code, e.Message)
		out.RPCError = rpcErr
	default:
		n, trunc := int64(len(result)), false
		out.OutputBytes, out.Truncated = &n, &trunc
		if isErrorResult(result) {
			out.Error = "the tool reported an error (isError)"
		}
		out.Result = result
	}
	return out
}

// isErrorResult reports whether a CallToolResult says isError: true,
// reading only its top-level members.
func isErrorResult(result json.RawMessage) bool {
	return string(jsonrpc.Field(result, "isError")) == "true"
}

// toolNameOf reads params.name as far as it can, for auditing a call that
// could not be parsed.
func toolNameOf(params json.RawMessage) string {
	var p struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(params, &p) != nil || p.Name == "" {
		return "?"
	}
	if len(p.Name) > 128 {
		return p.Name[:128]
	}
	return p.Name
}
