package tracing

import (
	"context"
	"encoding/json"
	"testing"
)

// benchCall is one request's tracing work in the gateway: extract, the
// gateway span, the downstream span, inject into _meta, end both.
func benchCall(b *testing.B, tr *Tracer, meta json.RawMessage) {
	b.ReportAllocs()
	for b.Loop() {
		ctx := tr.Extract(context.Background(), meta, nil)
		ctx, span := tr.StartCall(ctx, Call{Method: "tools/call", Surface: "memory", Tool: "store", Agent: "reader"})
		dctx, dspan := tr.StartDownstream(ctx, Downstream{Server: "memory", Method: "tools/call", Tool: "store"})
		if _, err := tr.InjectMeta(dctx, meta); err != nil {
			b.Fatal(err)
		}
		_ = TraceID(ctx)
		dspan.End()
		span.End()
	}
}

func BenchmarkOffNoContext(b *testing.B) {
	otelEnv(b, nil)
	tr, _ := New(context.Background(), Config{})
	benchCall(b, tr, json.RawMessage(`{"progressToken":1}`))
}

func BenchmarkOffWithCallerContext(b *testing.B) {
	otelEnv(b, nil)
	tr, _ := New(context.Background(), Config{})
	benchCall(b, tr, json.RawMessage(`{"progressToken":1,"traceparent":"`+callerParent+`"}`))
}

func BenchmarkOn(b *testing.B) {
	rcv := newReceiverB(b)
	otelEnv(b, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv})
	tr, err := New(context.Background(), Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	benchCall(b, tr, json.RawMessage(`{"progressToken":1,"traceparent":"`+callerParent+`"}`))
}
