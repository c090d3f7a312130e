package gateway

import (
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/mcpwire"
)

// agentView is one agent's view of one surface under one revision,
// computed once and shared by every request: the tools it may call
// (schemas narrowed by its constraints) and, for a pack surface, the
// encoded tools/list result.
type agentView struct {
	tools  []grantcheck.ToolView
	byName map[string]grantcheck.ToolView
	// jobs is true when the agent holds a background command on the pack
	// (it is then shown the job tools).
	jobs bool
	// list is the tools/list result of a pack surface; modernList the same
	// for 2026-07-28 (resultType, and cacheScope private: this agent's).
	list, modernList []byte
}

// holds reports whether the view shows the agent anything.
func (v *agentView) holds() bool { return len(v.tools) > 0 }

// view returns agent's view of surface under the current revision.
func (g *Gateway) view(agent, surfaceID string) *agentView {
	rev := g.rev.Load()
	key := endpointKey{agent, surfaceID}
	if v, ok := rev.views.Load(key); ok {
		return v.(*agentView)
	}
	tools := rev.snap.Policy.Tools(agent, surfaceID)
	v := &agentView{tools: tools, byName: make(map[string]grantcheck.ToolView, len(tools))}
	for _, t := range tools {
		v.byName[t.Name] = t
	}
	if s, ok := rev.surfaces[surfaceID]; ok {
		v.jobs = g.hasJobTools(s, tools)
		v.list = packToolList(rev, s, v)
		v.modernList = mcpwire.SetResultMembers(v.list, "cacheScope", `"private"`, "resultType", `"complete"`, "ttlMs", listTTL)
	}
	actual, _ := rev.views.LoadOrStore(key, v)
	return actual.(*agentView)
}
