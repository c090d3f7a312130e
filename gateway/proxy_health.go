package gateway

import (
	"errors"
	"fmt"
)

// DownstreamStatus is the health of one downstream MCP server as the status
// API shows it.
type DownstreamStatus struct {
	ID string `json:"id"`
	// Transport is stdio, http or sse.
	Transport string `json:"transport"`
	// State is connected, failed or unknown.
	State string `json:"state"`
	Error string `json:"error,omitempty"`
	// Stderr is a failed stdio server's last stderr lines (at most
	// transport.StderrLines), which usually say why it cannot start.
	Stderr []string `json:"stderr,omitempty"`
	Tools  int      `json:"tools"`
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
				case ps.downErr != nil:
					st.State, st.Error, st.Tools = "failed", ps.downErr.Error(), len(ps.tools)
				case ps.listed:
					st.State, st.Tools = "connected", len(ps.tools)
				}
				ps.mu.Unlock()
				if st.State == "failed" && tr == "stdio" {
					st.Stderr = ps.cfg.Stderr.Lines()
				}
				st.Error = g.runner.Redactor().Redact(st.Error)
				for i, l := range st.Stderr {
					st.Stderr[i] = g.runner.Redactor().Redact(l)
				}
			}
		}
		out = append(out, st)
	}
	return out
}

// setDownstreamErr records a client session's report on the server's
// connection: why it is down, or nil once a restart answered.
func (ps *proxyServer) setDownstreamErr(err error) {
	ps.mu.Lock()
	ps.downErr = err
	ps.mu.Unlock()
}

// ErrServerUnavailable is what an agent is told when an MCP server it is
// granted cannot be reached: which server, and why.
var ErrServerUnavailable = errors.New("MCP server unavailable")

// unavailable reports why agent cannot use server surfaceID right now: the
// server's tools could not be listed (it failed to start, or does not
// answer) and agent's grants name it. It is nil for any other surface, so a
// surface the agent holds nothing on stays undisclosed.
func (g *Gateway) unavailable(agent, surfaceID string) error {
	ps := g.proxy.server(surfaceID)
	if ps == nil || !g.grantsServer(agent, surfaceID) {
		return nil
	}
	ps.mu.Lock()
	err := ps.listErr
	ps.mu.Unlock()
	if err == nil {
		return nil
	}
	msg := g.runner.Redactor().Redact(err.Error())
	return fmt.Errorf("%w: %q could not be started or does not answer, so its tools cannot be listed (toolgate retries it; an operator sees it in /admin/status): %s", ErrServerUnavailable, surfaceID, msg)
}

// grantsServer reports whether any of agent's grants names server.
func (g *Gateway) grantsServer(agent, server string) bool {
	caps, err := g.Policy().Capabilities(agent)
	if err != nil {
		return false
	}
	for _, c := range caps {
		if c.Surface == server {
			return true
		}
	}
	return false
}
