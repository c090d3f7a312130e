package gateway

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func TestAuditPath(t *testing.T) {
	t.Parallel()
	ws := &workspace.Workspace{Path: "/srv/tg/toolgate.yaml"}
	if got := AuditPath(ws); got != "/srv/tg/audit.jsonl" {
		t.Errorf("default: %s", got)
	}
	ws.Gateway.Audit.Path = "logs/a.jsonl"
	if got := AuditPath(ws); got != filepath.Join("/srv/tg", "logs/a.jsonl") {
		t.Errorf("relative: %s", got)
	}
	ws.Gateway.Audit.Path = "/var/log/a.jsonl"
	if got := AuditPath(ws); got != "/var/log/a.jsonl" {
		t.Errorf("absolute: %s", got)
	}
}

// TestStoreAndAuditOptions: a secret the workspace names but the
// environment lacks stops the gateway with the setting named.
func TestStoreAndAuditOptions(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Parse(filepath.Join(t.TempDir(), "toolgate.yaml"), []byte(`version: 1
gateway:
  state: {postgres: {dsn: {env: NO_SUCH_DSN}}}
  audit: {fsync: never, signing_key: {env: NO_SUCH_KEY}}
agents:
  - {id: a}
`))
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) string { return "" }
	if _, err := StoreConfig(ws, none); err == nil || !strings.Contains(err.Error(), "gateway.state.postgres.dsn") {
		t.Errorf("StoreConfig: %v", err)
	}
	if _, err := AuditOptions(ws, none); err == nil || !strings.Contains(err.Error(), "gateway.audit.signing_key") {
		t.Errorf("AuditOptions: %v", err)
	}
	if _, err := AuditOptions(ws, func(string) string { return "not a key" }); err == nil || !strings.Contains(err.Error(), "gateway.audit.signing_key") {
		t.Errorf("AuditOptions with a bad key: %v", err)
	}
	ws.Gateway.Audit.SigningKey = nil
	if opts, err := AuditOptions(ws, none); err != nil || opts.Fsync {
		t.Errorf("fsync: never: %+v %v", opts, err)
	}
	cfg, err := StoreConfig(ws, func(string) string { return "postgres://u@h/db" })
	if err != nil || cfg.DSN != "postgres://u@h/db" || cfg.Dir != ws.StateDir() {
		t.Errorf("StoreConfig %+v %v", cfg, err)
	}
}

// TestAuditTrail: the gateway's audit names its file and reads back what
// was appended.
func TestAuditTrail(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	g := openTestGateway(t, path)
	if g.audit.where() != path {
		t.Errorf("where %q", g.audit.where())
	}
	callPack(t, g, "reader", "json-tools", "query", map[string]any{"filter": ".a", "file": "d.json"})
	if evs := events(t, g); len(evs) != 2 {
		t.Errorf("read back %d events", len(evs))
	}
	if err := g.probeStore(t.Context()); err != nil {
		t.Errorf("probeStore: %v", err)
	}
}
