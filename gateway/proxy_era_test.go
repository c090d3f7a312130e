package gateway

import (
	"context"
	"testing"
)

// TestServerEra: a server's era is probed once and kept; the stateless
// relay of an agent is one connection reused by its requests, and a new
// one after close.
func TestServerEra(t *testing.T) {
	t.Parallel()
	g := openProxyGateway(t)
	ps := g.proxy.server("conf")
	ctx := context.Background()
	era, err := g.serverEra(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := g.serverEra(ctx, ps)
	if again != era {
		t.Fatalf("era changed between probes: %v then %v", era, again)
	}
	cfg, cfgEra, err := g.eraConfig(ctx, ps)
	if err != nil || cfgEra != era || (era.Stateless() != (cfg == ps.stateless)) {
		t.Fatalf("eraConfig: %v %v %v", cfg == ps.stateless, cfgEra, err)
	}
	f1, err := g.forwarder(ctx, "tester", ps)
	if err != nil {
		t.Fatal(err)
	}
	f2, _ := g.forwarder(ctx, "tester", ps)
	other, _ := g.forwarder(ctx, "narrow", ps)
	if f1 != f2 || f1 == other {
		t.Fatal("one forwarder per agent, reused")
	}
	res, rpcErr, err := f1.Do(ctx, "tools/call", "echo", []byte(`{"name":"echo","arguments":{"text":"hi"}}`), nil)
	if err != nil || rpcErr != nil || len(res) == 0 {
		t.Fatalf("through the forwarder: %s %s %v", res, rpcErr, err)
	}
	ps.closeForwarders()
	if f3, err := g.forwarder(ctx, "tester", ps); err != nil || f3 == f1 {
		t.Fatalf("after close: a new forwarder expected (%v)", err)
	}
}

// TestServerEraUnreachable: a server that cannot be probed reports its
// error and the forwarder is tried again next time.
func TestServerEraUnreachable(t *testing.T) {
	t.Parallel()
	g := openYAML(t, `version: 1
mcp_servers:
  - {id: gone, command: [/nonexistent/mcp-server]}
agents:
  - {id: a, grants: ["server:gone"]}
`, nil)
	ps := g.proxy.server("gone")
	if _, err := g.forwarder(context.Background(), "a", ps); err == nil {
		t.Fatal("a forwarder to a server that does not exist")
	}
	if _, ok := ps.down.forwarders.Load("a"); ok {
		t.Error("a failed forwarder is kept (it should be tried again)")
	}
}
