package gateway

import (
	"context"
	"testing"
)

// TestDownstreamHealth: a server is unknown until first reached, connected
// once listed (with its tool count), failed with the error when it cannot
// be reached.
func TestDownstreamHealth(t *testing.T) {
	t.Parallel()
	bin := buildConformanceServer(t)
	g := openYAML(t, `version: 1
mcp_servers:
  - id: conf
    command: [`+bin+`, -stdio]
  - id: gone
    command: [/nonexistent/mcp-server]
  - id: web
    url: http://127.0.0.1:9/mcp
    transport: sse
agents:
  - {id: a, grants: ["server:conf", "server:gone"]}
`, nil)
	byID := func() map[string]DownstreamStatus {
		out := map[string]DownstreamStatus{}
		for _, s := range g.downstreamHealth() {
			out[s.ID] = s
		}
		return out
	}
	st := byID()
	if st["conf"].State != "unknown" || st["conf"].Transport != "stdio" || st["web"].Transport != "sse" {
		t.Fatalf("before any client: %+v", st)
	}
	g.ensureListed(context.Background(), g.proxy.server("conf"))
	g.ensureListed(context.Background(), g.proxy.server("gone"))
	st = byID()
	if st["conf"].State != "connected" || st["conf"].Tools == 0 {
		t.Errorf("conf after listing: %+v", st["conf"])
	}
	if st["gone"].State != "failed" || st["gone"].Error == "" {
		t.Errorf("gone: %+v", st["gone"])
	}
}
