package gateway

import (
	"bytes"
	"context"
	"net/http"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/tracing"
)

// downstreamHeaders is transport.Config.RequestHeaders: the trace context
// of the message being sent (its _meta traceparent, which the gateway set
// from its own span) is mirrored into the HTTP traceparent header, so a
// server tracing at the HTTP layer continues the same trace. The header
// is computed from the bytes sent, like the 2026-07-28 standard headers.
func (g *Gateway) downstreamHeaders(_ context.Context, msg []byte, h http.Header) {
	if !bytes.Contains(msg, []byte(tracing.MetaTraceparent)) {
		return
	}
	meta := jsonrpc.Field(jsonrpc.Field(msg, "params"), "_meta")
	if meta == nil {
		return
	}
	ctx := g.tracer.Extract(context.Background(), meta, nil)
	if trace.SpanContextFromContext(ctx).IsValid() {
		g.tracer.InjectHTTP(ctx, h)
	}
}

// startCallSpan continues the caller's trace context — _meta's
// traceparent if the call has one, else what the HTTP request carried
// (already in ctx) — and starts the gateway's span for one tools/call.
// The span's trace id is what the audit records.
func (g *Gateway) startCallSpan(ctx context.Context, call *callpipe.Call, agent, surface string) (context.Context, trace.Span) {
	if tp := call.MetaString(tracing.MetaTraceparent); tp != "" {
		meta := append([]byte(`{"traceparent":`), jsonrpc.Quote(tp)...)
		if ts := call.MetaString(tracing.MetaTracestate); ts != "" {
			meta = append(meta, `,"tracestate":`...)
			meta = append(meta, jsonrpc.Quote(ts)...)
		}
		meta = append(meta, '}')
		ctx = g.tracer.Extract(ctx, meta, nil)
	}
	return g.tracer.StartCall(ctx, tracing.Call{Method: "tools/call", Surface: surface, Tool: call.Name, Agent: agent})
}

// forwardedMeta is the _meta a proxied call is forwarded with: the call's
// own, with the trace context of the downstream span in place of the
// caller's (which it continues). Without any trace context the call's
// _meta is returned as it is.
func (g *Gateway) forwardedMeta(ctx context.Context, call *callpipe.Call) map[string]any {
	fields := g.tracer.MetaFields(ctx)
	_, hasTP := call.Meta[tracing.MetaTraceparent]
	_, hasTS := call.Meta[tracing.MetaTracestate]
	if fields == nil && !hasTP && !hasTS {
		return call.Meta
	}
	meta := make(map[string]any, len(call.Meta)+2)
	for k, v := range call.Meta {
		if k != tracing.MetaTraceparent && k != tracing.MetaTracestate {
			meta[k] = v
		}
	}
	for k, v := range fields {
		meta[k] = v
	}
	return meta
}
