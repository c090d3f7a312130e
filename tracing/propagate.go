package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/strictjson"
)

// The _meta keys MCP reserves for W3C trace context (2026-07-28, basic:
// "OpenTelemetry trace context"). baggage is reserved too; toolgate does
// not forward it: it is the caller's free-form data, and a gateway passes
// on only what it decided.
const (
	MetaTraceparent = "traceparent"
	MetaTracestate  = "tracestate"
)

// Bounds on what a caller's trace context may weigh; longer values are
// ignored (a traceparent is 55 characters; W3C asks tracestate carriers to
// keep at least 512).
const (
	maxTraceparent = 128
	maxTracestate  = 1024
)

// Extract returns ctx carrying the caller's trace context: from the
// request's _meta (params._meta, raw JSON; may be nil) when it has a
// traceparent, else from the HTTP traceparent header (h may be nil). The
// caller's context is untrusted: malformed values are ignored, and it only
// ever names a parent span.
func (t *Tracer) Extract(ctx context.Context, meta json.RawMessage, h http.Header) context.Context {
	if carrier := metaCarrier(meta); carrier != nil {
		if out := t.prop.Extract(ctx, carrier); trace.SpanContextFromContext(out).IsValid() {
			return out
		}
	}
	if h != nil && len(h.Get("traceparent")) <= maxTraceparent && len(h.Get("tracestate")) <= maxTracestate {
		return t.prop.Extract(ctx, propagation.HeaderCarrier(h))
	}
	return ctx
}

// metaCarrier reads the two trace keys of a _meta object; nil when there
// is no usable traceparent. Other keys are not decoded.
func metaCarrier(meta json.RawMessage) propagation.MapCarrier {
	if len(bytes.TrimSpace(meta)) == 0 || !bytes.Contains(meta, []byte(MetaTraceparent)) {
		return nil
	}
	var m struct {
		Traceparent *string `json:"traceparent"`
		Tracestate  *string `json:"tracestate"`
	}
	if json.Unmarshal(meta, &m) != nil || m.Traceparent == nil {
		return nil // not an object, or a trace key of the wrong type: ignored whole
	}
	tp := *m.Traceparent
	if tp == "" || len(tp) > maxTraceparent {
		return nil
	}
	c := propagation.MapCarrier{MetaTraceparent: tp}
	if m.Tracestate != nil && *m.Tracestate != "" && len(*m.Tracestate) <= maxTracestate {
		c[MetaTracestate] = *m.Tracestate
	}
	return c
}

// InjectHTTP sets traceparent (and tracestate) on an outgoing request's
// headers from ctx's span, replacing any the caller sent.
func (t *Tracer) InjectHTTP(ctx context.Context, h http.Header) {
	h.Del("traceparent")
	h.Del("tracestate")
	t.prop.Inject(ctx, propagation.HeaderCarrier(h))
}

// InjectMeta returns meta (a _meta object, raw JSON; nil for none) with
// traceparent and tracestate set from ctx's span: the other members are
// kept byte for byte and in order, the trace keys replaced in place or
// appended. With no trace context in ctx, meta is returned as it came,
// less any trace keys (the caller's, which toolgate did not continue). A
// meta that strictjson refuses (not an object, a duplicate or case-variant
// key, …) is an error.
func (t *Tracer) InjectMeta(ctx context.Context, meta json.RawMessage) (json.RawMessage, error) {
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	hasMeta := len(bytes.TrimSpace(meta)) > 0 && !bytes.Equal(bytes.TrimSpace(meta), []byte("null"))
	if len(carrier) == 0 && (!hasMeta || !bytes.Contains(meta, []byte("trace"))) {
		return meta, nil // nothing to add, nothing to remove: the fast path
	}
	if !t.Enabled() && maps.Equal(carrier, metaCarrier(meta)) {
		return meta, nil // off, and the caller's own context passes through as it came
	}
	var members []strictjson.Member
	if hasMeta {
		var err error
		if members, err = strictjson.Members(meta); err != nil {
			return nil, fmt.Errorf("_meta: %w", err)
		}
	}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	write := func(key string, val []byte) {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		out.Write(strictjson.AppendString(nil, key))
		out.WriteByte(':')
		out.Write(val)
	}
	done := map[string]bool{}
	for _, m := range members {
		if m.Key == MetaTraceparent || m.Key == MetaTracestate {
			if v, ok := carrier[m.Key]; ok && !done[m.Key] {
				write(m.Key, strictjson.AppendString(nil, v))
				done[m.Key] = true
			}
			continue
		}
		write(m.Key, m.Value)
	}
	for _, k := range []string{MetaTraceparent, MetaTracestate} {
		if v, ok := carrier[k]; ok && !done[k] {
			write(k, strictjson.AppendString(nil, v))
		}
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// MetaFields returns the trace context of ctx's span as the _meta members
// that carry it (traceparent, and tracestate when there is one); nil when
// ctx carries none. A caller building _meta as a map (callpipe's forwarded
// params) sets these in place of the caller's own.
func (t *Tracer) MetaFields(ctx context.Context) map[string]string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil // the W3C propagator injects nothing then
	}
	carrier := propagation.MapCarrier{}
	t.prop.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	return carrier
}
