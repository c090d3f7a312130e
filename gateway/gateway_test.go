package gateway

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenRefuses: a gateway that cannot fully check its workspace, or
// resolve what it names, does not start, and says why.
func TestOpenRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name, yaml, want string
	}{
		{"no file", "", "toolgate.yaml"},
		{"bad grant", "version: 1\nagents:\n  - {id: a, grants: [\"tool:nope:x\"]}\n", "nope"},
		{"credential without a value", "version: 1\ncredentials:\n  k: {env: UNSET_CREDENTIAL}\nagents:\n  - {id: a}\n", "credentials"},
	}
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"), "toolgate.yaml")
		if c.yaml != "" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		g, err := Open(context.Background(), path, Options{})
		if err == nil {
			g.Close()
			t.Errorf("%s: opened", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to name %q", c.name, err, c.want)
		}
	}
}

// TestGatewayAccessors: what an open gateway hands its callers.
func TestGatewayAccessors(t *testing.T) {
	t.Parallel()
	g := openTestGateway(t, "")
	if g.Workspace() != g.live() || g.Policy() != g.rev.Load().snap.Policy || g.Store() == nil || g.Approvals() == nil || g.Metrics() == nil {
		t.Fatal("accessors")
	}
	if !g.agentExists("reader") || g.agentExists("mallory") {
		t.Error("agentExists")
	}
	if info := g.clientInfo(); info.Name != "toolgate" || info.Version != "dev" {
		t.Errorf("clientInfo %+v", info)
	}
	g.SetBaseURL("http://127.0.0.1:7330")
	if u := g.serveURL.Load(); u == nil || *u != "http://127.0.0.1:7330" {
		t.Error("SetBaseURL")
	}
}
