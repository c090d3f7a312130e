package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/tracing"
)

// proxyExecutor forwards allowed calls to a downstream server: over the
// client's own relayed session, or the agent's stateless forwarder. The
// server receives only the params the pipeline decided on, re-encoded
// from the parsed call — never the client's bytes — and a refused call
// never reaches it. Its answer is passed back as the server wrote it (the
// pipeline only redacts it), a JSON-RPC error as is.
type proxyExecutor struct {
	g       *Gateway
	server  string
	forward func(ctx context.Context, name string, params []byte) (result, rpcErr json.RawMessage, err error)
}

func (x proxyExecutor) provider() callpipe.Provider { return callpipe.MCP }

// Definition implements callpipe.Definer: the digest of the definition
// the server last listed for tool name ("" while it is not known).
func (x proxyExecutor) Definition(name string) string {
	if ps := x.g.proxy.server(x.server); ps != nil {
		return string(ps.digestOf(name))
	}
	return ""
}

// Prepare has nothing to check for a proxied tool: the pin of its
// definition is part of the decision (callpipe.Snapshot.Decide), and the
// server decides whether it can run it.
func (x proxyExecutor) Prepare(_ context.Context, call *callpipe.Call) (callpipe.Run, error) {
	if x.forward == nil {
		return nil, errNoID
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
	params := r.call.AppendParams(make([]byte, 0, r.call.ParamsSizeHint()), g.forwardedMeta(ctx, r.call))
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
