// Package tracing is toolgate's OpenTelemetry tracing: an
// OTLP/HTTP exporter configured by the standard OTEL_* variables and off
// when none is set; the gateway span continuing the caller's W3C trace
// context (from an MCP request's _meta or the traceparent header); and the
// context injected into what goes downstream. Nothing here touches
// OpenTelemetry's global provider or propagator.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// instrumentation names the spans' origin in the exported data.
const instrumentation = "github.com/toolgate/toolgate"

// Config is how the gateway builds its Tracer. The OTEL_* variables are
// the process environment's: the OTLP exporter and the SDK read them
// there themselves, so the on/off decision reads them there too.
type Config struct {
	ServiceVersion string       // service.version (the toolgate version)
	Logger         *slog.Logger // where "tracing on/off" is said; default discards
}

// Tracer starts the gateway's spans and carries trace context across it.
// Off, it costs a context lookup: spans are non-recording, but a caller's
// trace context still passes through to the downstream request.
type Tracer struct {
	provider *sdktrace.TracerProvider // nil when off
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
}

// New reads the OTEL_* variables and returns a Tracer, exporting over
// OTLP/HTTP when they ask for it. A value toolgate cannot honour is an
// error naming the variable. Call Shutdown at exit to flush what is
// buffered.
func New(ctx context.Context, cfg Config) (*Tracer, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	t := &Tracer{tracer: noop.NewTracerProvider().Tracer(instrumentation), prop: propagation.TraceContext{}}
	on, endpoint, err := decide(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if !on {
		return t, nil
	}
	// No options: endpoint, headers, timeout, compression, protocol and TLS
	// come from the OTEL_EXPORTER_OTLP_* variables, as the exporter reads them.
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter for %s: %w", endpoint, err)
	}
	defaults := []attribute.KeyValue{attribute.String("service.name", "toolgate")}
	if cfg.ServiceVersion != "" {
		defaults = append(defaults, attribute.String("service.version", cfg.ServiceVersion))
	}
	// OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME, read by the SDK, win
	// over toolgate's defaults.
	res, err := resource.New(ctx, resource.WithAttributes(defaults...), resource.WithFromEnv())
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("tracing: OTEL_RESOURCE_ATTRIBUTES or OTEL_SERVICE_NAME: %w", err)
	}
	t.provider = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	t.tracer = t.provider.Tracer(instrumentation)
	service, _ := res.Set().Value("service.name")
	cfg.Logger.Info("tracing on", "endpoint", endpoint, "service", service.AsString()) // headers may hold secrets: never logged
	return t, nil
}

// Enabled reports whether spans are recorded and exported.
func (t *Tracer) Enabled() bool { return t.provider != nil }

// ForceFlush exports every span ended so far.
func (t *Tracer) ForceFlush(ctx context.Context) error {
	if t.provider == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

// Shutdown flushes and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t.provider == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Call describes the request a gateway span is for.
type Call struct {
	Method  string // JSON-RPC method: tools/call, tools/list, …
	Surface string
	Tool    string // member name, for tools/call
	Agent   string
}

// StartCall starts the gateway's span for one request, as a child of the
// trace context already in ctx (see Extract). End it when the answer is
// sent; record the decision with SetDecision.
func (t *Tracer) StartCall(ctx context.Context, c Call) (context.Context, trace.Span) {
	if !t.Enabled() {
		return t.startOff(ctx)
	}
	name := c.Method
	if c.Tool != "" {
		name += " " + c.Tool
	}
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("mcp.method.name", c.Method),
		attribute.String("gen_ai.tool.name", c.Tool),
		attribute.String("toolgate.surface", c.Surface),
		attribute.String("toolgate.agent", c.Agent),
	))
}

// startOff is a span start with tracing off: nothing is recorded, and the
// caller's trace context (which the audit's trace_id and the downstream
// request carry on) is ctx's own, so ctx is returned as it is, with its
// span — what the no-op tracer returns, without wrapping ctx anew on
// every call.
func (t *Tracer) startOff(ctx context.Context) (context.Context, trace.Span) {
	if span := trace.SpanFromContext(ctx); !span.IsRecording() {
		return ctx, span
	}
	return t.tracer.Start(ctx, "")
}

// Downstream describes a request toolgate sends on: to a proxied MCP
// server, or a pack command it runs.
type Downstream struct {
	Server string // the mcp_servers id, or the pack id
	Method string // tools/call, or "exec" for a pack command
	Tool   string
}

// StartDownstream starts the child span of the request sent downstream;
// inject its context (InjectHTTP, InjectMeta) into that request.
func (t *Tracer) StartDownstream(ctx context.Context, d Downstream) (context.Context, trace.Span) {
	if !t.Enabled() {
		return t.startOff(ctx)
	}
	name := "downstream " + d.Method
	return t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("mcp.method.name", d.Method),
		attribute.String("gen_ai.tool.name", d.Tool),
		attribute.String("toolgate.downstream", d.Server),
	))
}

// SetDecision records the pipeline's decision (allow, deny, approval, …)
// and, when the call failed, its error. A deny is not a span error: the
// gateway worked.
func SetDecision(span trace.Span, decision, reason string, err error) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("toolgate.decision", decision), attribute.String("toolgate.reason", reason))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
}

// TraceID is the trace id of ctx's span as 32 hex digits, for the audit
// event's trace_id; "" when ctx carries no valid trace context.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.TraceID().IsValid() {
		return ""
	}
	return sc.TraceID().String()
}
