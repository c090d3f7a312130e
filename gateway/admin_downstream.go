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

// downstreamHealth reports each declared MCP server. Until the proxy keeps
// live sessions to report on, every server shows as unknown.
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
		out = append(out, DownstreamStatus{ID: sv.ID, Transport: tr, State: "unknown"})
	}
	return out
}
