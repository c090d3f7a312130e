package metrics

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape GETs /metrics from m's handler over loopback and parses it with
// the Prometheus text parser.
func scrape(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// find returns the metric of family name whose labels are exactly labels.
func find(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no family %s", name)
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
		if match {
			return m
		}
	}
	return nil
}

func TestScrape(t *testing.T) {
	t.Parallel()
	m := New()
	m.DeclareSurfaces([]string{"json-tools", "memory", "gone-soon"})
	jt := m.Surface("json-tools")
	jt.Decision(Allow)
	jt.Decision(Allow)
	jt.Decision(Deny)
	jt.Call(Allow, 20*time.Millisecond)
	jt.Call(Allow, 40*time.Millisecond)
	jt.Call(Outcome(200), time.Second) // out of range: counted as error
	m.Decision("memory", Approval)
	m.Call("memory", Approval, 30*time.Second)
	m.Decision("undeclared", Allow) // bounded: lands on _other
	m.Surface("gone-soon").Decision(Allow)
	jt.SessionOpened()
	jt.SessionOpened()
	jt.SessionClosed()
	m.AuditAppend(2*time.Millisecond, 5)
	m.AuditAppend(4*time.Millisecond, 1)
	m.SetPendingApprovals(3)
	m.SetDownstreamUp("memory", true)
	m.SetDownstreamUp("neotoma", false)
	m.SetDownstreamUp("old", true)
	m.ForgetDownstream("old")
	m.DeclareSurfaces([]string{"json-tools", "memory"}) // a reload drops gone-soon

	fams := scrape(t, m)
	counter := func(surface, outcome string) float64 {
		mm := find(t, fams, "toolgate_decisions_total", map[string]string{"surface": surface, "outcome": outcome})
		if mm == nil {
			t.Fatalf("no decisions series for %s/%s", surface, outcome)
		}
		return mm.GetCounter().GetValue()
	}
	for _, c := range []struct {
		surface, outcome string
		want             float64
	}{
		{"json-tools", "allow", 2}, {"json-tools", "deny", 1}, {"json-tools", "approval", 0}, {"json-tools", "error", 0},
		{"memory", "approval", 1}, {"memory", "allow", 0}, {OtherSurface, "allow", 1},
	} {
		if got := counter(c.surface, c.outcome); got != c.want {
			t.Errorf("decisions %s/%s = %v, want %v", c.surface, c.outcome, got, c.want)
		}
	}
	if find(t, fams, "toolgate_decisions_total", map[string]string{"surface": "gone-soon", "outcome": "allow"}) != nil {
		t.Error("series of an undeclared surface survived the reload")
	}

	h := find(t, fams, "toolgate_call_duration_seconds", map[string]string{"surface": "json-tools", "outcome": "allow"}).GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() < 0.059 || h.GetSampleSum() > 0.061 {
		t.Errorf("json-tools allow calls: count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
	}
	if c := find(t, fams, "toolgate_call_duration_seconds", map[string]string{"surface": "json-tools", "outcome": "error"}).GetHistogram().GetSampleCount(); c != 1 {
		t.Errorf("error calls %d", c)
	}
	slow := find(t, fams, "toolgate_call_duration_seconds", map[string]string{"surface": "memory", "outcome": "approval"}).GetHistogram()
	for _, b := range slow.Bucket {
		want := uint64(0)
		if b.GetUpperBound() >= 30 {
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("approval bucket le=%v count %d", b.GetUpperBound(), b.GetCumulativeCount())
		}
	}

	if s := find(t, fams, "toolgate_sessions_open", map[string]string{"surface": "json-tools"}).GetGauge().GetValue(); s != 1 {
		t.Errorf("sessions %v", s)
	}
	ap := find(t, fams, "toolgate_audit_append_duration_seconds", nil).GetHistogram()
	bs := find(t, fams, "toolgate_audit_batch_events", nil).GetHistogram()
	if ap.GetSampleCount() != 2 || bs.GetSampleCount() != 2 || bs.GetSampleSum() != 6 {
		t.Errorf("audit: appends %d, batches %d sum %v", ap.GetSampleCount(), bs.GetSampleCount(), bs.GetSampleSum())
	}
	if p := find(t, fams, "toolgate_approvals_pending", nil).GetGauge().GetValue(); p != 3 {
		t.Errorf("pending %v", p)
	}
	up := func(server string) *dto.Metric {
		return find(t, fams, "toolgate_downstream_up", map[string]string{"server": server})
	}
	if up("memory").GetGauge().GetValue() != 1 || up("neotoma").GetGauge().GetValue() != 0 || up("old") != nil {
		t.Errorf("downstream_up: memory %v neotoma %v old %v", up("memory"), up("neotoma"), up("old"))
	}
	for name, typ := range map[string]dto.MetricType{
		"toolgate_decisions_total": dto.MetricType_COUNTER, "toolgate_call_duration_seconds": dto.MetricType_HISTOGRAM,
		"toolgate_approvals_pending": dto.MetricType_GAUGE, "go_goroutines": dto.MetricType_GAUGE,
	} {
		if fams[name].GetType() != typ {
			t.Errorf("%s is %v, want %v", name, fams[name].GetType(), typ)
		}
	}
}

// TestOwnRegistry: two gateways in one process (as in tests) do not share
// series, and nothing lands on the global default registry.
func TestOwnRegistry(t *testing.T) {
	t.Parallel()
	a, b := New(), New()
	a.DeclareSurfaces([]string{"s"})
	b.DeclareSurfaces([]string{"s"})
	a.Decision("s", Allow)
	if v := find(t, scrape(t, b), "toolgate_decisions_total", map[string]string{"surface": "s", "outcome": "allow"}).GetCounter().GetValue(); v != 0 {
		t.Fatalf("b sees a's decision: %v", v)
	}
	fams, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if strings.HasPrefix(f.GetName(), "toolgate_") {
			t.Fatalf("%s on the default registry", f.GetName())
		}
	}
}

// TestHotPathAllocations: the calls the gateway makes per request allocate
// nothing once the surface is declared.
func TestHotPathAllocations(t *testing.T) {
	m := New()
	m.DeclareSurfaces([]string{"json-tools"})
	s := m.Surface("json-tools")
	cases := map[string]func(){
		"Surface.Decision": func() { s.Decision(Allow) },
		"Surface.Call":     func() { s.Call(Deny, time.Millisecond) },
		"Metrics.Decision": func() { m.Decision("json-tools", Allow) },
		"Metrics.Call":     func() { m.Call("json-tools", Allow, time.Millisecond) },
		"undeclared":       func() { m.Decision("nope", Allow) },
		"AuditAppend":      func() { m.AuditAppend(time.Millisecond, 3) },
		"Pending":          func() { m.SetPendingApprovals(2) },
	}
	for name, f := range cases {
		if n := testing.AllocsPerRun(200, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

func BenchmarkSurfaceHandle(b *testing.B) {
	m := New()
	m.DeclareSurfaces([]string{"json-tools", "memory"})
	s := m.Surface("json-tools")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			s.Decision(Allow)
			s.Call(Allow, 3*time.Millisecond)
		}
	})
}

func BenchmarkByName(b *testing.B) {
	m := New()
	m.DeclareSurfaces([]string{"json-tools", "memory"})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Decision("json-tools", Allow)
			m.Call("json-tools", Allow, 3*time.Millisecond)
		}
	})
}

func BenchmarkWithLabelValues(b *testing.B) {
	// The baseline the pre-resolved handles avoid: label lookup per call.
	m := New()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.decisions.WithLabelValues("json-tools", "allow").Inc()
			m.calls.WithLabelValues("json-tools", "allow").Observe(0.003)
		}
	})
}
