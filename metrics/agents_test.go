package metrics

import (
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestAgentSeriesBounded: decisions are counted per declared agent and
// surface; an undeclared agent or surface (an attacker's name) never
// becomes a label; a reload drops the series of removed agents.
func TestAgentSeriesBounded(t *testing.T) {
	t.Parallel()
	m := New()
	ws := &workspace.Workspace{
		MCPServers:   []*workspace.MCPServer{{ID: "memory"}},
		CommandPacks: []*workspace.CommandPack{{ID: "notes"}},
		Agents:       []*workspace.Agent{{ID: "writer"}, {ID: "reader"}},
	}
	m.DeclareWorkspace(ws)
	m.AgentDecision("writer", "notes", Allow)
	m.AgentDecision("writer", "notes", Allow)
	m.AgentDecision("mallory-<script>", "notes", Deny)
	m.AgentDecision("reader", "no-such-surface", Deny)
	fams := scrape(t, m)
	val := func(agent, surface, outcome string) float64 {
		mm := find(t, fams, "toolgate_agent_decisions_total", map[string]string{"agent": agent, "surface": surface, "outcome": outcome})
		if mm == nil {
			t.Errorf("no series agent=%s surface=%s outcome=%s", agent, surface, outcome)
			return -1
		}
		return mm.GetCounter().GetValue()
	}
	if v := val("writer", "notes", "allow"); v != 2 {
		t.Errorf("writer on notes: %v, want 2", v)
	}
	if v := val(OtherAgent, "notes", "deny"); v != 1 {
		t.Errorf("undeclared agent: %v, want 1 under %s", v, OtherAgent)
	}
	if v := val("reader", OtherSurface, "deny"); v != 1 {
		t.Errorf("undeclared surface: %v, want 1 under %s", v, OtherSurface)
	}
	for _, m := range fams["toolgate_agent_decisions_total"].Metric {
		for _, l := range m.Label {
			if l.GetValue() == "mallory-<script>" || l.GetValue() == "no-such-surface" {
				t.Fatalf("an undeclared name became a label: %v", m.Label)
			}
		}
	}
	if val("reader", "memory", "approval") != 0 {
		t.Error("a declared pair is not exported at zero from start")
	}
	ws.Agents = ws.Agents[:1] // reader removed by a reload
	m.DeclareWorkspace(ws)
	fams = scrape(t, m)
	if find(t, fams, "toolgate_agent_decisions_total", map[string]string{"agent": "reader", "surface": "memory", "outcome": "allow"}) != nil {
		t.Error("series of a removed agent still exported")
	}
	if val("writer", "notes", "allow") != 2 {
		t.Error("a reload lost a kept agent's count")
	}
}

// TestTokensRefused: the reason label is a fixed set.
func TestTokensRefused(t *testing.T) {
	t.Parallel()
	m := New()
	m.TokenRefused(EndpointMCP, "unknown_token")
	m.TokenRefused(EndpointAdmin, "no_token")
	m.TokenRefused("whatever", "expired")
	m.TokenRefused(EndpointMCP, "attacker-chosen")
	fams := scrape(t, m)
	for _, c := range []struct {
		endpoint, reason string
	}{{"mcp", "unknown_token"}, {"admin", "no_token"}, {"mcp", "expired"}, {"mcp", RefusedOther}} {
		if mm := find(t, fams, "toolgate_tokens_refused_total", map[string]string{"endpoint": c.endpoint, "reason": c.reason}); mm.GetCounter().GetValue() != 1 {
			t.Errorf("%s/%s: %v", c.endpoint, c.reason, mm)
		}
	}
}

// TestDownstreamStateFromStart: each declared server has a state from its
// declaration on — unknown, then connected or failed.
func TestDownstreamStateFromStart(t *testing.T) {
	t.Parallel()
	m := New()
	m.DeclareWorkspace(&workspace.Workspace{MCPServers: []*workspace.MCPServer{{ID: "memory"}, {ID: "fs"}}})
	state := func(server, st string) float64 {
		return find(t, scrape(t, m), "toolgate_downstream_state", map[string]string{"server": server, "state": st}).GetGauge().GetValue()
	}
	if state("memory", StateUnknown) != 1 || state("fs", StateUnknown) != 1 || state("fs", StateConnected) != 0 {
		t.Fatal("servers are not unknown from start")
	}
	m.SetDownstreamUp("memory", true)
	m.SetDownstreamUp("fs", false)
	if state("memory", StateConnected) != 1 || state("memory", StateUnknown) != 0 || state("fs", StateFailed) != 1 {
		t.Error("states not updated")
	}
}
