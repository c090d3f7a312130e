package identity

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestFromWorkspace loads a real workspace declaring gateway.identity.jwt
// with a relative jwks_file and verifies a token with the result.
func TestFromWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k := newECKey(t, "ws")
	writeFileAtomic(t, filepath.Join(dir, "keys.json"), jwks(t, k))
	yaml := `version: 1
gateway:
  identity:
    jwt:
      issuer: ` + testIssuer + `
      jwks_file: keys.json
      audience: ` + testAudience + `
      agent_claim: agent
      clock_skew: 2m
agents:
  - id: reader
    token: {env: READER_TOKEN}
`
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg, ok := ConfigFromWorkspace(ws, nil)
	if !ok || cfg.JWKSFile != filepath.Join(dir, "keys.json") || cfg.AgentClaim != "agent" || cfg.ClockSkew.Minutes() != 2 {
		t.Fatalf("config %+v %v", cfg, ok)
	}
	clk := newClock()
	cfg.now = clk.now
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := claimsAt(clk.now(), "user-1")
	c["agent"] = "reader"
	id, err := v.Verify(context.Background(), sign(t, k, c))
	if err != nil || id.Agent != "reader" {
		t.Fatalf("%+v %v", id, err)
	}
	ws.Gateway.Identity.JWT = nil
	if _, ok := ConfigFromWorkspace(ws, nil); ok {
		t.Fatal("config from a workspace without jwt")
	}
}
