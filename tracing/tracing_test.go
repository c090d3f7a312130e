package tracing

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

const (
	callerTrace  = "0af7651916cd43dd8448eb211c80319c"
	callerSpan   = "00f067aa0ba902b7"
	callerParent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSpanTree is the §14 check: a tools/call whose _meta carries the
// caller's trace context yields a gateway span (child of the caller's)
// and a "downstream" span (child of the gateway's) with the same trace id,
// exported over OTLP/HTTP; the downstream server receives that context in
// its traceparent header and in _meta; the audit gets the trace id.
func TestSpanTree(t *testing.T) { // not parallel: the exporter reads the process's OTEL_* variables
	for _, gz := range []bool{false, true} {
		name := "identity"
		if gz {
			name = "gzip"
		}
		t.Run(name, func(t *testing.T) {
			rcv := newReceiver(t)
			vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.srv.URL, "OTEL_SERVICE_NAME": "toolgate-test"}
			if gz {
				vars["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
			}
			otelEnv(t, vars)
			tr, err := New(context.Background(), Config{ServiceVersion: "v0-test"})
			if err != nil {
				t.Fatal(err)
			}
			if !tr.Enabled() {
				t.Fatal("tracing off with an endpoint set")
			}
			// The downstream MCP server: records what trace context it got.
			gotHeader := make(chan string, 1)
			down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotHeader <- r.Header.Get("traceparent")
				w.WriteHeader(204)
			}))
			t.Cleanup(down.Close)

			meta := json.RawMessage(`{"progressToken":7,"traceparent":"` + callerParent + `","tracestate":"vendor=x"}`)
			ctx := tr.Extract(context.Background(), meta, http.Header{"Traceparent": {"00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01"}})
			ctx, span := tr.StartCall(ctx, Call{Method: "tools/call", Surface: "memory", Tool: "store", Agent: "reader"})
			if got := TraceID(ctx); got != callerTrace {
				t.Fatalf("audit trace_id %q, want the caller's %q (from _meta, over the header)", got, callerTrace)
			}
			dctx, dspan := tr.StartDownstream(ctx, Downstream{Server: "memory", Method: "tools/call", Tool: "store"})
			req, _ := http.NewRequestWithContext(dctx, http.MethodPost, down.URL, nil)
			req.Header.Set("traceparent", "00-11111111111111111111111111111111-1111111111111111-01") // the caller's, to be replaced
			tr.InjectHTTP(dctx, req.Header)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			outMeta, err := tr.InjectMeta(dctx, meta)
			if err != nil {
				t.Fatal(err)
			}
			SetDecision(span, "allow", "granted by server:memory", nil)
			dspan.End()
			span.End()
			if err := tr.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}

			spans := rcv.received()
			if len(spans) != 2 {
				t.Fatalf("%d spans exported, want 2", len(spans))
			}
			var gw, ds *tracepb.Span
			for _, s := range spans {
				if s.service != "toolgate-test" {
					t.Errorf("service.name %q", s.service)
				}
				switch s.span.Name {
				case "tools/call store":
					gw = s.span
				case "downstream tools/call":
					ds = s.span
				}
			}
			if gw == nil || ds == nil {
				t.Fatalf("spans %v", spans)
			}
			hexOf := func(b []byte) string { return hex.EncodeToString(b) }
			if hexOf(gw.TraceId) != callerTrace || hexOf(ds.TraceId) != callerTrace {
				t.Fatalf("trace ids %s %s", hexOf(gw.TraceId), hexOf(ds.TraceId))
			}
			if hexOf(gw.ParentSpanId) != callerSpan {
				t.Fatalf("gateway span's parent %s, want the caller's %s", hexOf(gw.ParentSpanId), callerSpan)
			}
			if hexOf(ds.ParentSpanId) != hexOf(gw.SpanId) {
				t.Fatalf("downstream span's parent %s, want the gateway span %s", hexOf(ds.ParentSpanId), hexOf(gw.SpanId))
			}
			if gw.Kind != tracepb.Span_SPAN_KIND_SERVER || ds.Kind != tracepb.Span_SPAN_KIND_CLIENT {
				t.Errorf("kinds %v %v", gw.Kind, ds.Kind)
			}
			if gw.TraceState != "vendor=x" {
				t.Errorf("tracestate %q", gw.TraceState)
			}
			attrs := map[string]string{}
			for _, a := range gw.Attributes {
				attrs[a.Key] = a.GetValue().GetStringValue()
			}
			if attrs["toolgate.decision"] != "allow" || attrs["toolgate.agent"] != "reader" || attrs["toolgate.surface"] != "memory" || attrs["mcp.method.name"] != "tools/call" {
				t.Errorf("gateway span attributes %v", attrs)
			}
			want := "00-" + callerTrace + "-" + hexOf(ds.SpanId) + "-01"
			if h := <-gotHeader; h != want {
				t.Errorf("downstream traceparent header %q, want %q", h, want)
			}
			if string(outMeta) != `{"progressToken":7,"traceparent":"`+want+`","tracestate":"vendor=x"}` {
				t.Errorf("downstream _meta %s", outMeta)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestOff: with no OTEL_* variable (or exporter none, or the SDK
// disabled) nothing is recorded or exported, yet a caller's trace context
// still reaches the downstream unchanged.
func TestOff(t *testing.T) { // not parallel: the process's OTEL_* variables
	rcv := newReceiver(t)
	for name, vars := range map[string]map[string]string{
		"nothing set":   {},
		"exporter none": {"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.srv.URL},
		"sdk disabled":  {"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.srv.URL},
		"service only":  {"OTEL_SERVICE_NAME": "x"},
	} {
		t.Run(name, func(t *testing.T) {
			otelEnv(t, vars)
			tr, err := New(context.Background(), Config{})
			if err != nil {
				t.Fatal(err)
			}
			if tr.Enabled() {
				t.Fatal("tracing on")
			}
			ctx := tr.Extract(context.Background(), json.RawMessage(`{"traceparent":"`+callerParent+`"}`), nil)
			ctx, span := tr.StartCall(ctx, Call{Method: "tools/call", Tool: "t"})
			dctx, dspan := tr.StartDownstream(ctx, Downstream{Method: "tools/call"})
			if span.IsRecording() || dspan.IsRecording() {
				t.Fatal("recording while off")
			}
			out, err := tr.InjectMeta(dctx, json.RawMessage(`{"a":1}`))
			if err != nil || string(out) != `{"a":1,"traceparent":"`+callerParent+`"}` {
				t.Fatalf("passed-through _meta %s %v", out, err)
			}
			if TraceID(dctx) != callerTrace {
				t.Fatalf("trace id %q", TraceID(dctx))
			}
			dspan.End()
			span.End()
			if err := tr.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := tr.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n := len(rcv.received()); n != 0 {
		t.Fatalf("%d spans exported while off", n)
	}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	tr, _ := New(context.Background(), Config{})
	header := "00-" + strings.Repeat("a", 32) + "-" + strings.Repeat("b", 16) + "-01"
	cases := []struct {
		name   string
		meta   string
		header string
		want   string // trace id, "" for none
	}{
		{"meta", `{"traceparent":"` + callerParent + `"}`, "", callerTrace},
		{"meta wins over header", `{"traceparent":"` + callerParent + `"}`, header, callerTrace},
		{"header only", ``, header, strings.Repeat("a", 32)},
		{"meta without trace keys", `{"progressToken":1}`, header, strings.Repeat("a", 32)},
		{"malformed meta traceparent falls back to header", `{"traceparent":"00-zz-01"}`, header, strings.Repeat("a", 32)},
		{"meta traceparent not a string", `{"traceparent":42}`, "", ""},
		{"meta not an object", `["traceparent"]`, "", ""},
		{"all-zero trace id", `{"traceparent":"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}`, "", ""},
		{"oversized traceparent", `{"traceparent":"` + callerParent + strings.Repeat("0", 200) + `"}`, "", ""},
		{"oversized header", ``, header + strings.Repeat("0", 200), ""},
		{"nothing", ``, "", ""},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.header != "" {
			h.Set("traceparent", tc.header)
		}
		ctx := tr.Extract(context.Background(), json.RawMessage(tc.meta), h)
		if got := TraceID(ctx); got != tc.want {
			t.Errorf("%s: trace id %q, want %q", tc.name, got, tc.want)
		}
		if sc := trace.SpanContextFromContext(ctx); tc.want != "" && !sc.IsRemote() {
			t.Errorf("%s: extracted context not remote", tc.name)
		}
	}
}

func TestInjectMeta(t *testing.T) {
	t.Parallel()
	tr, _ := New(context.Background(), Config{})
	withTrace := tr.Extract(context.Background(), json.RawMessage(`{"traceparent":"`+callerParent+`"}`), nil)
	tp := `"traceparent":"` + callerParent + `"`
	cases := []struct {
		name string
		ctx  context.Context
		meta string
		want string
		err  string
	}{
		{"nil meta", withTrace, ``, `{` + tp + `}`, ""},
		{"null meta", withTrace, `null`, `{` + tp + `}`, ""},
		{"members kept byte for byte, in order", withTrace, `{"z":{"b":1, "a":[1.50]},"a":"x"}`, `{"z":{"b":1, "a":[1.50]},"a":"x",` + tp + `}`, ""},
		{"trace key replaced in place", withTrace, `{"a":1,"traceparent":"00-11111111111111111111111111111111-1111111111111111-01","b":2}`, `{"a":1,` + tp + `,"b":2}`, ""},
		{"stale tracestate dropped", withTrace, `{"tracestate":"evil=1","a":1}`, `{"a":1,` + tp + `}`, ""},
		{"no context, nothing to do", context.Background(), `{"a":1}`, `{"a":1}`, ""},
		{"no context, nil stays nil", context.Background(), ``, ``, ""},
		{"no context, caller's trace keys dropped", context.Background(), `{"a":1,"traceparent":"junk"}`, `{"a":1}`, ""},
		{"not an object", withTrace, `[1]`, "", "expected a JSON object"},
		{"case-variant keys", withTrace, `{"a":1,"A":2}`, "", "differ only in case"},
		{"duplicate key", withTrace, `{"a":1,"a":2}`, "", `duplicate key "a"`},
		{"trailing data", withTrace, `{"a":1}{}`, "", "after the JSON value"},
		{"truncated", withTrace, `{"a":`, "", "_meta"},
	}
	for _, tc := range cases {
		out, err := tr.InjectMeta(tc.ctx, json.RawMessage(tc.meta))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || string(out) != tc.want {
			t.Errorf("%s: got %s %v, want %s", tc.name, out, err, tc.want)
		}
		if len(out) > 0 && !json.Valid(out) {
			t.Errorf("%s: invalid JSON %s", tc.name, out)
		}
	}
}

// TestDecide: tracing is on when an endpoint is named or the otlp
// exporter asked for, off otherwise; what toolgate cannot honour is
// refused naming the variable; the rest is left to the exporter.
func TestDecide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		vars     map[string]string
		on       bool
		endpoint string
		err      string
	}{
		{name: "nothing set", vars: nil},
		{name: "service name only", vars: map[string]string{"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_HEADERS": "a=b"}},
		{name: "exporter none", vars: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}},
		{name: "sdk disabled", vars: map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "zipkin"}},
		{name: "base endpoint", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318/"}, on: true, endpoint: "http://c:4318/"},
		{name: "traces endpoint first", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://t:443/custom"}, on: true, endpoint: "https://t:443/custom"},
		{name: "exporter otlp, default endpoint", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, endpoint: "http://localhost:4318/v1/traces"},
		{name: "json", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, on: true, endpoint: "http://c"},
		{name: "values left to the exporter", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TIMEOUT": "250",
			"OTEL_EXPORTER_OTLP_HEADERS": "a=b", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/ca.pem", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, on: true, endpoint: "http://c"},
		{name: "grpc refused", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL="grpc": toolgate exports over HTTP: use http/protobuf or http/json`},
		{name: "traces protocol refused", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "thrift"}, err: "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{name: "zipkin refused", vars: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: `OTEL_TRACES_EXPORTER="zipkin": toolgate exports traces with otlp (over HTTP) or none`},
		{name: "exporter list refused", vars: map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, err: "otlp (over HTTP) or none"},
		{name: "bad endpoint", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, err: `OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318": want an http(s) URL`},
		{name: "bad traces endpoint", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "unix:///s"}, err: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{name: "bad compression", vars: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, err: `OTEL_EXPORTER_OTLP_COMPRESSION="zstd": use gzip or none`},
	}
	for _, tc := range cases {
		on, endpoint, err := decide(env(tc.vars))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || on != tc.on || endpoint != tc.endpoint {
			t.Errorf("%s: on %v endpoint %q err %v, want on %v endpoint %q", tc.name, on, endpoint, err, tc.on, tc.endpoint)
		}
	}
}

// TestNewRefuses: New passes decide's refusal on, and a malformed
// OTEL_RESOURCE_ATTRIBUTES (which the SDK reads) too.
func TestNewRefuses(t *testing.T) { // not parallel: the process's OTEL_* variables
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, `tracing: OTEL_TRACES_EXPORTER="jaeger"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_RESOURCE_ATTRIBUTES": "novalue"}, "tracing: OTEL_RESOURCE_ATTRIBUTES"},
	} {
		otelEnv(t, tc.vars)
		if _, err := New(context.Background(), Config{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.vars, err, tc.want)
		}
	}
}

func TestMetaFields(t *testing.T) {
	t.Parallel()
	tr, _ := New(context.Background(), Config{})
	if got := tr.MetaFields(context.Background()); got != nil {
		t.Fatalf("no context: %v", got)
	}
	ctx := tr.Extract(context.Background(), json.RawMessage(`{"traceparent":"`+callerParent+`","tracestate":"k=v"}`), nil)
	got := tr.MetaFields(ctx)
	if len(got) != 2 || got[MetaTraceparent] != callerParent || got[MetaTracestate] != "k=v" {
		t.Fatalf("fields %v", got)
	}
}
