package metrics

import "github.com/toolgate/toolgate/workspace"

// DeclareWorkspace declares the surfaces of ws (its MCP servers and
// command packs) and drops the health series of servers it no longer has:
// call it at start and after each reload. Who may read /metrics
// (gateway.metrics.open, else the admin token) is the gateway's decision.
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
	m.mu.Lock()
	defer m.mu.Unlock()
	for s := range m.servers {
		if !servers[s] {
			m.downstreamUp.DeleteLabelValues(s)
			delete(m.servers, s)
		}
	}
}
