package metrics

import (
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func TestDeclareWorkspace(t *testing.T) {
	t.Parallel()
	m := New()
	ws := &workspace.Workspace{
		MCPServers:   []*workspace.MCPServer{{ID: "memory"}, {ID: "neotoma"}},
		CommandPacks: []*workspace.CommandPack{{ID: "json-tools"}},
	}
	m.DeclareWorkspace(ws)
	m.SetDownstreamUp("memory", true)
	m.SetDownstreamUp("neotoma", true)
	fams := scrape(t, m)
	for _, s := range []string{"memory", "neotoma", "json-tools"} {
		if find(t, fams, "toolgate_decisions_total", map[string]string{"surface": s, "outcome": "allow"}) == nil {
			t.Errorf("surface %s not declared", s)
		}
	}
	ws.MCPServers = ws.MCPServers[:1] // neotoma removed by a reload
	m.DeclareWorkspace(ws)
	fams = scrape(t, m)
	if find(t, fams, "toolgate_downstream_up", map[string]string{"server": "neotoma"}) != nil {
		t.Error("health of a removed server still exported")
	}
	if find(t, fams, "toolgate_decisions_total", map[string]string{"surface": "neotoma", "outcome": "allow"}) != nil {
		t.Error("decisions of a removed surface still exported")
	}
	if find(t, fams, "toolgate_downstream_up", map[string]string{"server": "memory"}).GetGauge().GetValue() != 1 {
		t.Error("memory health lost")
	}
}
