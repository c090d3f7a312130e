package e2e

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

const observeWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  admin_token: {env: ADMIN_TOKEN}
mcp_servers:
  - id: down
    url: DOWNURL
    effects: {greet: read, ping: read}
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants: [tool:down:greet]
`

// scrape GETs /metrics with token and parses it with the Prometheus text
// parser; it returns the status when that is not 200.
func scrape(t *testing.T, base, token string) (int, map[string]*dto.MetricFamily) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return resp.StatusCode, nil
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics is not the Prometheus text format: %v", err)
	}
	return 200, fams
}

// value is the value (a histogram's count) of family's series with labels.
func value(fams map[string]*dto.MetricFamily, family string, labels map[string]string) (float64, bool) {
	f := fams[family]
	if f == nil {
		return 0, false
	}
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		if len(got) != len(labels) {
			continue
		}
		same := true
		for k, v := range labels {
			same = same && got[k] == v
		}
		if !same {
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

// TestMetricsAndTraces runs the daemon with OTEL_EXPORTER_OTLP_ENDPOINT
// naming an in-process OTLP receiver and an admin token: a client's call
// carrying trace context in _meta continues through the gateway's span to
// the downstream request (its _meta and its HTTP traceparent name the
// downstream span, whose parent is the gateway span, whose parent is the
// caller's), the audit event records the same trace id; /metrics,
// behind the admin token, parses and counts the decisions by surface and
// outcome, the session, the audit's commits and the downstream's health.
func TestMetricsAndTraces(t *testing.T) {
	t.Parallel()
	down := newDownstream(t, "Greets someone.")
	sink := newOTLPSink(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", strings.Replace(observeWorkspace, "DOWNURL", down.URL, 1))
	d := startFleetDaemon(t, ws, []string{"READER_TOKEN=reader-tok-0123456789abcdef", "ADMIN_TOKEN=admin-tok-0123456789abcdef",
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.srv.URL, "OTEL_SERVICE_NAME=toolgate-e2e", "OTEL_BSP_SCHEDULE_DELAY=100"})
	s := rawConnect(t, d.base+"/mcp/down", "reader-tok-0123456789abcdef")

	const callerTrace, callerSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var r struct {
		Content []struct{ Text string } `json:"content"`
		IsError bool                    `json:"isError"`
	}
	res := s.result("tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "ada"},
		"_meta": map[string]any{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01"}})
	if err := json.Unmarshal(res, &r); err != nil || r.IsError || len(r.Content) == 0 || r.Content[0].Text != "hello ada" {
		t.Fatalf("greet: %s", res)
	}
	if text, isErr := s.callText("ping", nil); !isErr || !strings.HasPrefix(text, "DENIED: ") {
		t.Fatalf("ungranted ping: %q %v", text, isErr)
	}

	// The trace: caller → gateway span → downstream span → the request.
	spans := sink.await(t, func(spans []*tracepb.Span) bool {
		var gw, dn bool
		for _, s := range spans {
			gw = gw || s.Name == "tools/call greet"
			dn = dn || s.Name == "downstream tools/call"
		}
		return gw && dn
	})
	var gw, dn *tracepb.Span
	for _, s := range spans {
		switch s.Name {
		case "tools/call greet":
			gw = s
		case "downstream tools/call":
			dn = s
		}
	}
	if hex.EncodeToString(gw.TraceId) != callerTrace || hex.EncodeToString(gw.ParentSpanId) != callerSpan || gw.Kind != tracepb.Span_SPAN_KIND_SERVER {
		t.Errorf("gateway span: trace %x parent %x kind %v, want the caller's trace and span", gw.TraceId, gw.ParentSpanId, gw.Kind)
	}
	if hex.EncodeToString(dn.TraceId) != callerTrace || hex.EncodeToString(dn.ParentSpanId) != hex.EncodeToString(gw.SpanId) || dn.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("downstream span: trace %x parent %x, want the gateway span %x", dn.TraceId, dn.ParentSpanId, gw.SpanId)
	}
	wantTP := "00-" + callerTrace + "-" + hex.EncodeToString(dn.SpanId) + "-01"
	calls := down.calls()
	if len(calls) != 1 {
		t.Fatalf("the downstream got %d tools/call, want 1", len(calls))
	}
	var body struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(calls[0].body, &body); err != nil {
		t.Fatal(err)
	}
	if got := calls[0].header.Get("traceparent"); got != wantTP {
		t.Errorf("downstream HTTP traceparent %q, want %q", got, wantTP)
	}
	if got := body.Params.Meta["traceparent"]; got != wantTP {
		t.Errorf("downstream _meta.traceparent %v, want %q", got, wantTP)
	}
	var decision *tracedEvent
	evs := readAuditTrace(t, dir+"/audit.jsonl")
	for i := range evs {
		if evs[i].Action == "mcp:call:down:greet" && evs[i].Of == nil {
			decision = &evs[i]
		}
	}
	if decision == nil || decision.TraceID != callerTrace {
		t.Fatalf("audit decision event %+v, want trace_id %s", decision, callerTrace)
	}

	// The metrics.
	if code, _ := scrape(t, d.base, ""); code != http.StatusUnauthorized {
		t.Fatalf("/metrics without the admin token: HTTP %d", code)
	}
	if code, _ := scrape(t, d.base, "reader-tok-0123456789abcdef"); code != http.StatusUnauthorized {
		t.Fatalf("/metrics with an agent token: HTTP %d", code)
	}
	code, fams := scrape(t, d.base, "admin-tok-0123456789abcdef")
	if code != 200 {
		t.Fatalf("/metrics: HTTP %d", code)
	}
	for _, c := range []struct {
		family string
		labels map[string]string
		want   float64
	}{
		{"toolgate_decisions_total", map[string]string{"surface": "down", "outcome": "allow"}, 1},
		{"toolgate_decisions_total", map[string]string{"surface": "down", "outcome": "deny"}, 1},
		{"toolgate_call_duration_seconds", map[string]string{"surface": "down", "outcome": "allow"}, 1},
		{"toolgate_call_duration_seconds", map[string]string{"surface": "down", "outcome": "deny"}, 1},
		{"toolgate_sessions_open", map[string]string{"surface": "down"}, 1},
		{"toolgate_downstream_up", map[string]string{"server": "down"}, 1},
		{"toolgate_approvals_pending", map[string]string{}, 0},
	} {
		if v, ok := value(fams, c.family, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.family, c.labels, v, ok, c.want)
		}
	}
	if v, _ := value(fams, "toolgate_audit_batch_events", map[string]string{}); v < 1 {
		t.Errorf("no audit group commit observed")
	}
	s.close()
	waitFor(t, 10*time.Second, "the closed session to leave the gauge", func() bool {
		_, fams := scrape(t, d.base, "admin-tok-0123456789abcdef")
		v, ok := value(fams, "toolgate_sessions_open", map[string]string{"surface": "down"})
		return ok && v == 0
	})
}

// tracedEvent is an audit line with its trace id.
type tracedEvent struct {
	auditEvent
	TraceID string `json:"trace_id"`
}

func readAuditTrace(t *testing.T, path string) []tracedEvent {
	t.Helper()
	var out []tracedEvent
	for _, ev := range readAudit(t, path) {
		te := tracedEvent{auditEvent: ev}
		if err := json.Unmarshal([]byte(ev.raw), &te); err != nil {
			t.Fatal(err)
		}
		out = append(out, te)
	}
	return out
}
