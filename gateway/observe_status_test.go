package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/audit"
)

// TestStatus: what /admin/status reports of a gateway — the workspace in
// force, its surfaces, the audit's and the store's health, the approvals
// settings — and that every list is [] rather than null.
func TestStatus(t *testing.T) {
	t.Parallel()
	g, _ := adminServer(t)
	for i := 0; i < 4; i++ {
		if err := g.pipe.Journal().Append(&audit.Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow"}); err != nil {
			t.Fatal(err)
		}
	}
	st := g.Status()
	if !st.Audit.OK || st.Audit.Appended != 4 || st.Audit.FileBytes == 0 || st.Workspace.Revision == "" || len(st.Surfaces) != 1 ||
		st.Approvals.TTL != "10m0s" || st.Approvals.Wait != "30s" || !st.Store.OK || st.Store.Kind != "embedded" || strings.Join(st.Agents, ",") != "reader" {
		t.Errorf("status = %+v", st)
	}
	if st.Downstream == nil || st.Pins.Unpinned == nil {
		t.Error("a list encodes as null")
	}
}

// TestStatusAuditGone: an audit file that can no longer be appended to (it
// was removed) shows as not OK, saying why.
func TestStatusAuditGone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := openTestGateway(t, path)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if st := g.auditStatus(); st.OK || !strings.Contains(st.Error, "cannot be opened for appending") || st.Path != path {
		t.Errorf("audit status %+v", st)
	}
}
