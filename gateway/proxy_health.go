package gateway

// DownstreamStatus is the health of one downstream MCP server as the status
// API shows it.
type DownstreamStatus struct {
	ID string `json:"id"`
	// Transport is stdio, http or sse.
	Transport string `json:"transport"`
	// State is connected, failed or unknown.
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	Tools int    `json:"tools"`
}

// downstreamHealth reports each declared MCP server from what the proxy
// last saw: connected once it listed its tools, failed with the listing
// error, unknown until a client first reached it.
func (g *Gateway) downstreamHealth() []DownstreamStatus {
	out := make([]DownstreamStatus, 0, len(g.ws.MCPServers))
	for _, sv := range g.ws.MCPServers {
		tr := "stdio"
		switch {
		case sv.URL != "" && sv.Transport == "sse":
			tr = "sse"
		case sv.URL != "":
			tr = "http"
		}
		st := DownstreamStatus{ID: sv.ID, Transport: tr, State: "unknown"}
		if g.proxy != nil {
			if ps := g.proxy.servers[sv.ID]; ps != nil {
				ps.mu.Lock()
				switch {
				case ps.listErr != nil:
					st.State, st.Error = "failed", ps.listErr.Error()
				case ps.listed:
					st.State, st.Tools = "connected", len(ps.tools)
				}
				ps.mu.Unlock()
			}
		}
		out = append(out, st)
	}
	return out
}
