package gateway

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// revision is what the gateway decides with right now: the pipeline's
// snapshot and the per-(agent, surface) views compiled from its policy.
// A new policy (a reload, a downstream listing) is a new revision, so
// views never outlive the grants they were computed from.
type revision struct {
	snap  *callpipe.Snapshot
	views sync.Map // endpointKey → *agentView
	// superseded is closed when a newer revision replaces this one, which
	// wakes subscriptions/listen streams to compare the agent's new view.
	superseded chan struct{}
	// ws and surfaces are the workspace this revision was loaded from and
	// its pack surfaces (gateway/reload.go).
	ws       *workspace.Workspace
	surfaces map[string]*surface
	// lock is toolgate.lock in force (nil: no pinning) and packPins the
	// digests of this workspace's pack commands (gateway/pins.go).
	lock     *pin.Lock
	packPins map[string]map[string]pin.Digest
}

func newRevision(snap *callpipe.Snapshot) *revision {
	return &revision{snap: snap, superseded: make(chan struct{})}
}

// swapRevision replaces old with next if old is still in force.
func (g *Gateway) swapRevision(old, next *revision) bool {
	if !g.rev.CompareAndSwap(old, next) {
		return false
	}
	close(old.superseded)
	return true
}

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
		v.list = g.packToolList(rev, s, v)
		v.modernList = mcpwire.SetResultMembers(v.list, "cacheScope", `"private"`, "resultType", `"complete"`, "ttlMs", listTTL)
	}
	actual, _ := rev.views.LoadOrStore(key, v)
	return actual.(*agentView)
}

// packToolList encodes the tools/list result of a pack surface: the
// granted commands under their own names (those whose definition is
// pinned, when a lock is in force), then the job tools.
func (g *Gateway) packToolList(rev *revision, s *surface, v *agentView) []byte {
	defs := make([]mcp.Tool, 0, len(v.tools)+3)
	for _, t := range v.tools {
		if ok, _ := rev.pinned(s.pack.ID, t.Name, rev.packPins[s.pack.ID][t.Name]); !ok {
			continue
		}
		defs = append(defs, toolDefinition(t))
	}
	if v.jobs {
		defs = append(defs, jobToolDefinitions()...)
	}
	// A deterministic order, by name (a list is the same bytes every time).
	slices.SortFunc(defs, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	b, err := json.Marshal(struct {
		Tools []mcp.Tool `json:"tools"`
	}{defs})
	if err != nil {
		g.log.Error("tool list not encodable", "surface", s.pack.ID, "err", err)
		return []byte(`{"tools":[]}`)
	}
	return b
}
