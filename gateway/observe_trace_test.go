package gateway

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/mcpwire"
)

// otlpReceiver is an in-process OTLP/HTTP traces endpoint decoding each
// protobuf export as a collector would.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, err := io.ReadAll(req.Body)
		var ex coltracepb.ExportTraceServiceRequest
		if err != nil || proto.Unmarshal(b, &ex) != nil {
			http.Error(w, "bad export", 400)
			return
		}
		r.mu.Lock()
		for _, rs := range ex.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *otlpReceiver) received() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// TestTraceThroughAPackCall: the caller's _meta traceparent is continued
// by the gateway's span, the command's exec span is its child, and the
// audit records the trace id.
func TestTraceThroughAPackCall(t *testing.T) { // not parallel: the exporter reads the process's OTEL_* variables
	rcv := newOTLPReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.srv.URL+"/v1/traces")
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(pipelineWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": os.Getenv("PATH")}
	auditPath := filepath.Join(dir, "audit.jsonl")
	g, err := Open(context.Background(), ws, Options{Getenv: func(k string) string { return env[k] }, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	params := `{"name":"query","arguments":{"filter":".a","file":"d.json"},"_meta":{"traceparent":"00-` + traceID + `-` + parent + `-01"}}`
	raw, _ := g.callTool(context.Background(), "reader", "json-tools", json.RawMessage(`1`), json.RawMessage(params), mcpwire.Client{}, nil, g.packExecutor("reader", g.rev.Load().surfaces["json-tools"]))
	if strings.Contains(string(raw), `"isError":true`) {
		t.Fatalf("call: %s", raw)
	}
	g.Close() // flushes the spans
	var gw, exec *tracepb.Span
	for _, s := range rcv.received() {
		switch s.Name {
		case "tools/call query":
			gw = s
		case "downstream exec":
			exec = s
		}
	}
	if gw == nil || exec == nil {
		t.Fatalf("spans received: %v", rcv.received())
	}
	if hex.EncodeToString(gw.TraceId) != traceID || hex.EncodeToString(gw.ParentSpanId) != parent {
		t.Errorf("gateway span trace %x parent %x, want the caller's", gw.TraceId, gw.ParentSpanId)
	}
	if hex.EncodeToString(exec.ParentSpanId) != hex.EncodeToString(gw.SpanId) {
		t.Errorf("exec span's parent %x, want the gateway span %x", exec.ParentSpanId, gw.SpanId)
	}
	evs := auditEvents(t, auditPath)
	if len(evs) == 0 || evs[0].TraceID != traceID {
		t.Fatalf("audit trace id: %+v", evs)
	}
	decided := false
	for _, a := range gw.Attributes {
		if a.Key == "toolgate.decision" && a.Value.GetStringValue() == "allow" {
			decided = true
		}
	}
	if !decided {
		t.Errorf("gateway span carries no decision: %v", gw.Attributes)
	}
}

// TestTraceFromHTTPHeader: with no _meta traceparent, the HTTP traceparent
// header of the request is continued, in both eras, and recorded in the
// audit; a call's _meta traceparent wins over the header.
func TestTraceFromHTTPHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	wsPath := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(wsPath, []byte(strings.Replace(pipelineWorkspace, "  - id: reader\n", "  - id: reader\n    token: {env: READER}\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	auditPath := filepath.Join(dir, "audit.jsonl")
	env := map[string]string{"PATH": os.Getenv("PATH"), "READER": "reader-token-0123456789"}
	g, err := Open(context.Background(), wsPath, Options{Getenv: func(k string) string { return env[k] }, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	h := g.Handler(HTTPOptions{})
	post := func(sid, traceparent, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/mcp/json-tools", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		r.Header.Set("Authorization", "Bearer reader-token-0123456789")
		if sid != "" {
			r.Header.Set("Mcp-Session-Id", sid)
		}
		if traceparent != "" {
			r.Header.Set("traceparent", traceparent)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("POST %s: %d %s", body, w.Code, w.Body)
		}
		return w
	}
	const headerTrace, metaTrace = "11111111111111111111111111111111", "22222222222222222222222222222222"
	tp := func(id string) string { return "00-" + id + "-00f067aa0ba902b7-01" }
	sid := post("", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`).Header().Get("Mcp-Session-Id")
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"query","arguments":{"filter":".a","file":"d.json"}}}`
	post(sid, tp(headerTrace), call)
	post(sid, tp(headerTrace), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"query","arguments":{"filter":".a","file":"d.json"},"_meta":{"traceparent":"`+tp(metaTrace)+`"}}}`)
	modern := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"query","arguments":{"filter":".a","file":"d.json"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	r := httptest.NewRequest("POST", "/mcp/json-tools", strings.NewReader(modern))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Authorization", "Bearer reader-token-0123456789")
	r.Header.Set("MCP-Protocol-Version", "2026-07-28")
	r.Header.Set("Mcp-Method", "tools/call")
	r.Header.Set("Mcp-Name", "query")
	r.Header.Set("traceparent", tp(headerTrace))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("modern call: %d %s", w.Code, w.Body)
	}
	var got []string
	for _, ev := range auditEvents(t, auditPath) {
		if ev.Action == "command:call:json-tools:query" && ev.Of == nil {
			got = append(got, ev.TraceID)
		}
	}
	if strings.Join(got, ",") != headerTrace+","+metaTrace+","+headerTrace {
		t.Fatalf("audit trace ids %v, want header, _meta, header", got)
	}
}

// TestForwardedMeta: what a proxied call's _meta carries downstream. A
// caller's trace context is continued (tracing off: passed on as it came);
// a malformed or oversized one is not forwarded at all; other members are
// kept.
func TestForwardedMeta(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	const good = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	cases := []struct {
		name, meta string
		want       map[string]any
	}{
		{"no _meta", ``, nil},
		{"no trace keys", `,"_meta":{"progressToken":7}`, map[string]any{"progressToken": json.Number("7")}},
		{"valid traceparent passes on", `,"_meta":{"traceparent":"` + good + `","k":"v"}`, map[string]any{"traceparent": good, "k": "v"}},
		{"malformed traceparent dropped", `,"_meta":{"traceparent":"00-zz-01","tracestate":"evil=1","k":"v"}`, map[string]any{"k": "v"}},
		{"oversized traceparent dropped", `,"_meta":{"traceparent":"` + good + strings.Repeat("0", 300) + `"}`, map[string]any{}},
		{"traceparent of the wrong type dropped", `,"_meta":{"traceparent":42}`, map[string]any{}},
	}
	for _, c := range cases {
		call, err := callpipe.ParseCall([]byte(`{"name":"x","arguments":{}` + c.meta + `}`))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		ctx, span := g.startCallSpan(context.Background(), call, "a", "s")
		got := g.forwardedMeta(ctx, call)
		span.End()
		if c.want == nil {
			if got != nil {
				t.Errorf("%s: %v, want no _meta", c.name, got)
			}
			continue
		}
		b1, _ := json.Marshal(got)
		b2, _ := json.Marshal(c.want)
		if string(b1) != string(b2) {
			t.Errorf("%s: forwarded %s, want %s", c.name, b1, b2)
		}
	}
}
