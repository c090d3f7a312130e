package e2e

import (
	"testing"
	"time"
)

// TestOpsRestoredFileClearsReloadError: after a refused reload, putting
// the file in force back clears the error in /admin/status, without a
// SIGHUP and without a reload (the revision in force never changed).
func TestOpsRestoredFileClearsReloadError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := "version: 1\ngateway:\n  admin_token: {env: OPS_ADMIN}\nagents:\n  - id: ci\n    token: {env: CI_TOKEN}\n"
	ws := writeFile(t, dir, "toolgate.yaml", good)
	d, logs := startLoggedDaemon(t, []string{"CI_TOKEN=ci-token-0123456789abcdef", "OPS_ADMIN=" + adminToken}, "-w", ws)
	type reloadStatus struct {
		Revision        string `json:"revision"`
		Reloads         int    `json:"reloads"`
		Error           string `json:"error"`
		RefusedRevision string `json:"refused_revision"`
	}
	status := func() reloadStatus {
		var st struct {
			Reload reloadStatus `json:"reload"`
		}
		adminJSON(t, d, "GET", "/admin/status", &st)
		return st.Reload
	}
	before := status()
	replaceFile(t, ws, []byte(good+"  - id: broken\n    grants: [nonsense:::]\n"))
	waitFor(t, 20*time.Second, "the broken file to be refused", func() bool { return status().Error != "" })
	replaceFile(t, ws, []byte(good))
	var after reloadStatus
	waitFor(t, 20*time.Second, "the restored file to clear the reload error", func() bool {
		after = status()
		return after.Error == "" && after.RefusedRevision == ""
	})
	if after.Revision != before.Revision || after.Reloads != before.Reloads {
		t.Errorf("restoring the file in force reloaded it: %+v, was %+v", after, before)
	}
	waitFor(t, 10*time.Second, "the log line saying the refused reload was cleared", func() bool {
		return logLine(logs, "back to the revision in force") != nil
	})
}
