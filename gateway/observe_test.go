package gateway

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
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
	g, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "admin-token-0123456789", "READER": "reader-token-0123456789", "PATH": os.Getenv("PATH")})
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
	w := initialize(t, g.Handler(HTTPOptions{}), "127.0.0.1", "/mcp/json-tools", "reader-token-0123456789")
	if w.Code != 200 {
		t.Fatalf("initialize: %d %s", w.Code, w.Body)
	}
	code, fams := scrapeMetrics(t, srv.URL, map[string]string{"Authorization": "Bearer admin-token-0123456789"})
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
	g, err := openAdminGateway(t, strings.Replace(adminWorkspace, "gateway:\n", "gateway:\n  metrics: {open: true}\n", 1), map[string]string{"ADMIN": "admin-token-0123456789"})
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
