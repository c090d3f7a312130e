package gateway

import (
	"context"
	"errors"
	"strings"
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

// TestServerUnavailable: a server that exits at start is failed with its
// stderr in the status, and an agent granted it is told which server and
// why; an agent granted nothing on it, and a pack surface, are told
// nothing (ok stays the caller's "no such endpoint").
func TestServerUnavailable(t *testing.T) {
	t.Parallel()
	g := openYAML(t, `version: 1
credentials:
  k: {env: K}
mcp_servers:
  - id: dies
    command: [/bin/sh, -c, "echo 'first words' >&2; echo \"Error: key $SECRET refused\" >&2; exit 2"]
    env: {SECRET: "{credential.k}"}
agents:
  - {id: a, grants: ["server:dies"]}
  - {id: b, grants: []}
`, map[string]string{"K": "sekrit-value-0123"})
	ps := g.proxy.server("dies")
	g.ensureListed(context.Background(), ps)
	var st DownstreamStatus
	for _, s := range g.downstreamHealth() {
		if s.ID == "dies" {
			st = s
		}
	}
	if st.State != "failed" || len(st.Stderr) != 2 || st.Stderr[0] != "first words" || !strings.Contains(st.Stderr[1], "Error: key ") {
		t.Errorf("status %+v", st)
	}
	if strings.Contains(strings.Join(st.Stderr, "\n")+st.Error, "sekrit-value-0123") {
		t.Errorf("the credential a server printed reached the status: %+v", st)
	}
	err := g.unavailable("a", "dies")
	if !errors.Is(err, ErrServerUnavailable) || !strings.Contains(err.Error(), `"dies"`) || !strings.Contains(err.Error(), "| first words") {
		t.Errorf("granted agent told %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "sekrit-value-0123") {
		t.Errorf("the credential reached the agent: %v", err)
	}
	if err := g.unavailable("b", "dies"); err != nil {
		t.Errorf("agent granted nothing there told %v", err)
	}
	if err := g.unavailable("a", "nosuch"); err != nil {
		t.Errorf("unknown surface: %v", err)
	}
}
