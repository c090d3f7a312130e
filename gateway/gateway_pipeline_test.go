package gateway

import (
	"strings"
	"testing"
)

// TestApproveHint: the hint names the CLI on the shared store always, and
// the daemon's admin API and console only once it listens with the admin
// API on.
func TestApproveHint(t *testing.T) {
	t.Parallel()
	on := openYAML(t, adminWorkspace, map[string]string{"ADMIN": "admin-token-0123456789", "READER": "reader-token-0123456789"})
	if h := on.approveHint("ap-1"); !strings.Contains(h, "toolgate approvals -w ") || !strings.HasSuffix(h, "approve ap-1`") {
		t.Errorf("before listening: %s", h)
	}
	on.SetBaseURL("http://127.0.0.1:7330")
	if h := on.approveHint("ap-1"); !strings.Contains(h, "--server http://127.0.0.1:7330 approve ap-1") || !strings.Contains(h, "http://127.0.0.1:7330/ui") {
		t.Errorf("listening: %s", h)
	}
	off := openTestGateway(t, "")
	off.SetBaseURL("http://127.0.0.1:7331")
	if h := off.approveHint("ap-2"); strings.Contains(h, "--server") || strings.Contains(h, "/ui") {
		t.Errorf("admin API off: %s", h)
	}
}

// TestPipelineWired: the pipeline decides with the revision in force and
// audits into the gateway's audit.
func TestPipelineWired(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	callPack(t, g, "reader", "json-tools", "query", map[string]any{"filter": ".a", "file": "d.json"})
	evs := events(t, g)
	if len(evs) != 2 || evs[0].Revision != g.live().Revision || evs[1].Of == nil {
		t.Errorf("audit %+v", evs)
	}
}
