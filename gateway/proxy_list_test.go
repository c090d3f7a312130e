package gateway

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestListServerTools: every declared server is enumerated as the gateway
// reaches it; one that cannot be is reported, not fatal.
func TestListServerTools(t *testing.T) {
	t.Parallel()
	bin := buildConformanceServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(`version: 1
mcp_servers:
  - id: conf
    command: [`+bin+`, -stdio]
  - id: gone
    command: [/nonexistent/mcp-server]
agents:
  - {id: a, grants: ["server:conf"]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tools, errs := ListServerTools(context.Background(), ws, os.Getenv, nil)
	if len(tools["conf"]) == 0 || errs["conf"] != nil {
		t.Errorf("conf: %d tools, err %v", len(tools["conf"]), errs["conf"])
	}
	if errs["gone"] == nil || tools["gone"] != nil {
		t.Errorf("gone: err %v, tools %v", errs["gone"], tools["gone"])
	}
	if tools, errs := ListServerTools(context.Background(), &workspace.Workspace{Path: path}, nil, nil); len(tools)+len(errs) != 0 {
		t.Errorf("no servers: %v %v", tools, errs)
	}
}
