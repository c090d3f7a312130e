package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/toolgate/toolgate/audit"
)

// TestTeamAuditRecordsRedactedArguments: with gateway.audit.arguments:
// redacted the decision event says what was written, the credential
// redacted; without it (the default) only the digest is recorded.
func TestTeamAuditRecordsRedactedArguments(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		d, auditPath := teamDaemon(t, teamOptions{wait: "1s", arguments: on})
		notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
		call(t, notes, "append", map[string]any{"text": "rotate " + teamAPIKey + " tonight"})
		evs := eventsWhere(t, auditPath, func(ev audit.Event) bool { return ev.Action == "command:call:notes:append" && ev.Of == nil })
		if len(evs) != 1 {
			t.Fatalf("arguments %v: %d decision events, want 1", on, len(evs))
		}
		got := string(evs[0].Arguments)
		switch {
		case on && (!strings.Contains(got, "rotate [REDACTED:api] tonight") || strings.Contains(got, teamAPIKey)):
			t.Errorf("audit.arguments: redacted: the decision event's arguments are %s", got)
		case !on && got != "":
			t.Errorf("by default the decision event records arguments: %s", got)
		}
		if evs[0].ArgsSHA256 == "" {
			t.Error("the digest is gone")
		}
		raw, err := os.ReadFile(auditPath)
		if err != nil || strings.Contains(string(raw), teamAPIKey) {
			t.Error("the credential is in the audit log")
		}
	}
}

// TestTeamMetricsPerAgentBounded: /metrics counts decisions per declared
// agent and surface, never making a label of a name a request carries;
// it counts refused tokens on /mcp and the admin API, and has each
// declared server's health from start (unknown, then connected).
func TestTeamMetricsPerAgentBounded(t *testing.T) {
	t.Parallel()
	rec := recorderBinary(t)
	extra := "mcp_servers:\n  - id: rec\n    command: [" + rec + ", -impl, mcpgo, -stdio, -record, " + filepath.Join(t.TempDir(), "rec.jsonl") + "]\n    effects: {echo: read}\n"
	d, _ := teamDaemon(t, teamOptions{wait: "1s", extra: extra, grants: "[tool:notes:append, tool:vault:stash, tool:rec:echo]"})
	scrape := func() map[string]*dto.MetricFamily {
		t.Helper()
		req, _ := http.NewRequest("GET", d.base+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("/metrics with an operator's token: %s", resp.Status)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return fams
	}
	value := func(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
		f := fams[name]
		if f == nil {
			return 0, false
		}
	next:
		for _, m := range f.Metric {
			if len(m.Label) != len(labels) {
				continue
			}
			for _, l := range m.Label {
				if labels[l.GetName()] != l.GetValue() {
					continue next
				}
			}
			if m.Counter != nil {
				return m.Counter.GetValue(), true
			}
			return m.Gauge.GetValue(), true
		}
		return 0, false
	}

	fams := scrape()
	if v, ok := value(fams, "toolgate_downstream_state", map[string]string{"server": "rec", "state": "unknown"}); !ok || v != 1 {
		t.Errorf("rec's health at start: %v %v, want state unknown", v, ok)
	}
	if _, ok := value(fams, "toolgate_agent_decisions_total", map[string]string{"agent": "writer", "surface": "notes", "outcome": "approval"}); !ok {
		t.Error("writer's series on notes are not there from start")
	}

	notes := mcpHTTP(t, d.base+"/mcp/notes", writerToken)
	call(t, notes, "append", map[string]any{"text": "held"}) // held: approval
	recCl := mcpHTTP(t, d.base+"/mcp/rec", writerToken)
	if _, isErr, _, err := call(t, recCl, "echo", map[string]any{"x": 1}); err != nil || isErr {
		t.Fatalf("echo: %v %v", isErr, err)
	}
	// Attacks on the labels and the tokens: an unknown tool name, unknown
	// surfaces, bad tokens on /mcp and on the admin API.
	call(t, notes, "no-such-tool-<script>", map[string]any{})
	for _, tok := range []string{"", "not-a-token-of-anyone-at-all"} {
		for _, path := range []string{"/mcp/notes", "/mcp/evil-surface", "/admin/approvals"} {
			req, _ := http.NewRequest("POST", d.base+path, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			if path == "/admin/approvals" {
				req.Method = "GET"
			}
			if tok != "" {
				req.Header.Set("Authorization", "Bearer "+tok)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
	}

	waitFor(t, 20*time.Second, "the metrics to show the calls", func() bool {
		v, _ := value(scrape(), "toolgate_agent_decisions_total", map[string]string{"agent": "writer", "surface": "rec", "outcome": "allow"})
		return v == 1
	})
	fams = scrape()
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"toolgate_agent_decisions_total", map[string]string{"agent": "writer", "surface": "notes", "outcome": "approval"}, 1},
		{"toolgate_agent_decisions_total", map[string]string{"agent": "writer", "surface": "notes", "outcome": "deny"}, 1},
		{"toolgate_tokens_refused_total", map[string]string{"endpoint": "mcp", "reason": "no_token"}, 2},
		{"toolgate_tokens_refused_total", map[string]string{"endpoint": "mcp", "reason": "unknown_token"}, 2},
		{"toolgate_tokens_refused_total", map[string]string{"endpoint": "admin", "reason": "no_token"}, 1},
		{"toolgate_tokens_refused_total", map[string]string{"endpoint": "admin", "reason": "unknown_token"}, 1},
		{"toolgate_downstream_state", map[string]string{"server": "rec", "state": "connected"}, 1},
		{"toolgate_downstream_state", map[string]string{"server": "rec", "state": "unknown"}, 0},
	} {
		if v, ok := value(fams, c.name, c.labels); !ok || v != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, v, ok, c.want)
		}
	}
	for name, f := range fams {
		for _, m := range f.Metric {
			for _, l := range m.Label {
				if strings.Contains(l.GetValue(), "evil-surface") || strings.Contains(l.GetValue(), "<script>") || strings.Contains(l.GetValue(), "not-a-token") {
					t.Errorf("%s: a request's name became a label: %v", name, m.Label)
				}
			}
		}
	}
}
