package gateway

import (
	"context"
	"encoding/json"
	"errors"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/identity"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/tracing"
)

// executor runs the allowed calls of one kind of surface — a command pack
// (packExecutor) or a proxied server (proxyExecutor) — and names the
// provider its calls are audited under.
type executor interface {
	callpipe.Executor
	provider() callpipe.Provider
}

// errNoID refuses a tools/call that cannot be answered.
var errNoID = errors.New("tools/call was sent without an id (as a notification, or with \"id\": null); a call must be a request")

// callTool is the one entry of a tools/call, for every surface (pack or
// proxied) and every era and transport (a session, a stateless 2026-07-28
// request, stdio): it parses the params, refuses a call without an id,
// builds the asker that reaches the client while the call is held,
// continues the caller's trace in the gateway's span (whose trace id the
// audit records), and hands the call to the pipeline, which decides,
// runs it through exec and audits it. id is nil for a call sent as a
// notification: the pipeline refuses and audits it. hold, when set, may
// take a held call off the request (a 2026-07-28 client). It returns the
// result for the client, or a JSON-RPC error object (a malformed call, a
// proxied server's own error) as is.
func (g *Gateway) callTool(ctx context.Context, agent, surface string, id, params json.RawMessage, client mcpwire.Client, hold callpipe.Holder, exec executor) (result, rpcErr json.RawMessage) {
	req := callpipe.Request{Agent: agent, Provider: exec.provider(), Surface: surface, Exec: exec, Hold: hold}
	if c, ok := identity.CallerFrom(ctx); ok && c.Agent == agent {
		req.TokenScoped, req.TokenScopes = c.TokenScoped, c.Scopes
	}
	call, err := callpipe.ParseCall(params)
	switch {
	case err != nil:
		req.ParseErr, req.Name = err, toolNameOf(params)
	case !jsonrpc.HasID(id):
		req.ParseErr, req.Name = errNoID, call.Name
	default:
		req.Call = call
		req.Asker = newAsker(client, id, call.ProgressToken())
		req.Protocol = client.Version
		var span trace.Span
		ctx, span = g.startCallSpan(ctx, call, agent, surface)
		defer span.End()
		req.TraceID = tracing.TraceID(ctx)
	}
	res := g.pipe.Call(ctx, req)
	if res.Denied {
		if s, ok := hold.(denialShaper); ok {
			res.JSON = s.shapeDenial(res.JSON)
		}
	}
	return res.JSON, res.RPCError
}

// denialShaper is implemented by a Holder whose client reads more than the
// result of a refusal: a 2026-07-28 client that declared the tool-approval
// extension (tasks_approval.go).
type denialShaper interface {
	shapeDenial(result []byte) []byte
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
