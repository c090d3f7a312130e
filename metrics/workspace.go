package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolgate/toolgate/workspace"
)

// DeclareWorkspace declares the surfaces of ws (its MCP servers and
// command packs) and its agents, gives each server a health state from
// start (unknown until the server is first reached, then connected or
// failed: toolgate_downstream_state)
// and drops the series of names it no longer has: call it at start and
// after each reload. Who may read /metrics (gateway.metrics.open, else the
// admin token) is the gateway's decision.
func (m *Metrics) DeclareWorkspace(ws *workspace.Workspace) {
	names := make([]string, 0, len(ws.MCPServers)+len(ws.CommandPacks))
	servers := map[string]bool{}
	for _, s := range ws.MCPServers {
		names = append(names, s.ID)
		servers[s.ID] = true
	}
	for _, p := range ws.CommandPacks {
		names = append(names, p.ID)
	}
	m.DeclareSurfaces(names)
	agents := make([]string, 0, len(ws.Agents))
	for _, a := range ws.Agents {
		agents = append(agents, a.ID)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.declareAgents(agents, names)
	for s := range m.servers {
		if !servers[s] {
			m.downstreamUp.DeleteLabelValues(s)
			m.downstreamState.DeletePartialMatch(prometheus.Labels{"server": s})
			delete(m.servers, s)
		}
	}
	for s := range servers {
		if _, known := m.servers[s]; !known {
			m.servers[s] = false
			m.setStateLocked(s, StateUnknown)
		}
	}
}
