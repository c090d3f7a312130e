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

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/mcpwire"
)

// scrapeMetrics GETs /metrics with the headers given and parses the text
// format with the Prometheus parser.
func scrapeMetrics(t *testing.T, base string, hdr map[string]string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	resp := do(t, "GET", base+"/metrics", hdr, "")
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return 200, fams
}

// sample returns the value of family name's series with exactly labels.
func sample(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	for _, m := range f.Metric {
		if len(m.Label) != len(labels) {
			continue
		}
		match := true
		for _, l := range m.Label {
			if labels[l.GetName()] != l.GetValue() {
				match = false
			}
		}
		if !match {
			continue
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	g, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "admin-tok", "READER": "reader-tok", "PATH": os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	srv := httptest.NewServer(g.Handler(HTTPOptions{}))
	defer srv.Close()
	if code, _ := scrapeMetrics(t, srv.URL, nil); code != 401 {
		t.Fatalf("/metrics without the admin token: HTTP %d", code)
	}
	if code, _ := scrapeMetrics(t, srv.URL, map[string]string{"Authorization": "Bearer reader-tok"}); code != 401 {
		t.Fatalf("/metrics with an agent's token: HTTP %d", code)
	}
	dir := filepath.Dir(g.ws.Path)
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := callPack(t, g, "reader", "json-tools", "query", map[string]any{"filter": ".a", "file": "d.json"}); res.IsError {
		t.Fatalf("query: %s", resultText(res))
	}
	callPack(t, g, "reader", "json-tools", "edit-in-place", map[string]any{"filter": ".a", "file": "d.json"})
	// A session opened over HTTP is counted while it is open.
	w := initialize(t, g.Handler(HTTPOptions{}), "127.0.0.1", "/mcp/json-tools", "reader-tok")
	if w.Code != 200 {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	code, fams := scrapeMetrics(t, srv.URL, map[string]string{"Authorization": "Bearer admin-tok"})
	if code != 200 {
		t.Fatalf("/metrics with the admin token: HTTP %d", code)
	}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"toolgate_decisions_total", map[string]string{"surface": "json-tools", "outcome": "allow"}, 1},
		{"toolgate_decisions_total", map[string]string{"surface": "json-tools", "outcome": "deny"}, 1},
		{"toolgate_call_duration_seconds", map[string]string{"surface": "json-tools", "outcome": "allow"}, 1},
		{"toolgate_sessions_open", map[string]string{"surface": "json-tools"}, 1},
		{"toolgate_approvals_pending", map[string]string{}, 0},
	}
	for _, c := range checks {
		if v, ok := sample(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	if v, ok := sample(fams, "toolgate_audit_batch_events", map[string]string{}); !ok || v < 1 {
		t.Errorf("audit batches observed: %v %v", v, ok)
	}
	if v, ok := sample(fams, "toolgate_audit_append_duration_seconds", map[string]string{}); !ok || v < 1 {
		t.Errorf("audit appends observed: %v %v", v, ok)
	}
}

func TestMetricsOpen(t *testing.T) {
	t.Parallel()
	g, err := openAdminGateway(t, strings.Replace(adminWorkspace, "gateway:\n", "gateway:\n  metrics: {open: true}\n", 1), map[string]string{"ADMIN": "admin-tok"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	srv := httptest.NewServer(g.Handler(HTTPOptions{}))
	defer srv.Close()
	if code, fams := scrapeMetrics(t, srv.URL, nil); code != 200 || fams["toolgate_decisions_total"] == nil {
		t.Fatalf("open /metrics: HTTP %d", code)
	}
}

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
func TestTraceThroughAPackCall(t *testing.T) {
	t.Parallel()
	rcv := newOTLPReceiver(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(pipelineWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d.json"), []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PATH": os.Getenv("PATH"), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": rcv.srv.URL + "/v1/traces"}
	auditPath := filepath.Join(dir, "audit.jsonl")
	g, err := Open(context.Background(), ws, Options{Getenv: func(k string) string { return env[k] }, AuditPath: auditPath})
	if err != nil {
		t.Fatal(err)
	}
	const traceID, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	params := `{"name":"query","arguments":{"filter":".a","file":"d.json"},"_meta":{"traceparent":"00-` + traceID + `-` + parent + `-01"}}`
	raw, _ := g.callPackTool(context.Background(), "reader", g.rev.Load().surfaces["json-tools"], json.RawMessage(`1`), json.RawMessage(params), mcpwire.Client{}, nil)
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
	env := map[string]string{"PATH": os.Getenv("PATH"), "READER": "tok"}
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
		r.Header.Set("Authorization", "Bearer tok")
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
	r.Header.Set("Authorization", "Bearer tok")
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
