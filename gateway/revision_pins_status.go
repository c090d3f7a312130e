package gateway

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// unpinned lists, under the revision in force, every known tool that is
// not served: pack commands, and the tools of the proxied servers listed
// so far. Sorted by surface and tool.
func (g *Gateway) unpinned() []PinStatus {
	rev := g.rev.Load()
	if rev.snap.Lock == nil {
		return nil
	}
	var out []PinStatus
	add := func(provider callpipe.Provider, surface, tool string, live pin.Digest, def func() json.RawMessage) {
		st := rev.snap.Lock.Check(surface, tool, live)
		if st == pin.StatusPinned {
			return
		}
		old, _ := rev.snap.Lock.Pinned(surface, tool)
		u := PinStatus{Provider: string(provider), Surface: surface, Tool: tool, Status: string(st), Pinned: string(old), Live: string(live)}
		if pinnedDef, ok := rev.snap.Lock.Definition(surface, tool); ok || st == pin.StatusNew {
			if liveDef := def(); liveDef != nil {
				u.Changes = pin.Diff(pinnedDef, liveDef)
			}
		}
		out = append(out, u)
	}
	packDefs := map[pinKey]*workspace.Command{}
	for _, p := range rev.ws.CommandPacks {
		for _, c := range p.Commands {
			packDefs[pinKey{p.ID, c.ID}] = c
		}
	}
	for _, pack := range slices.Sorted(maps.Keys(rev.packPins)) {
		for _, cmd := range slices.Sorted(maps.Keys(rev.packPins[pack])) {
			add(callpipe.Command, pack, cmd, rev.packPins[pack][cmd], func() json.RawMessage {
				raw, err := pin.PackDefinition(packDefs[pinKey{pack, cmd}])
				if err != nil {
					return nil
				}
				return canonical(raw)
			})
		}
	}
	if g.proxy != nil {
		for _, id := range slices.Sorted(maps.Keys(g.proxy.servers)) {
			ps := g.proxy.servers[id]
			ps.mu.Lock()
			entries := slices.Clone(ps.tools)
			ps.mu.Unlock()
			for _, e := range entries {
				add(callpipe.MCP, id, e.info.Name, e.digest, func() json.RawMessage { return canonical(e.raw) })
			}
		}
	}
	slices.SortStableFunc(out, func(a, b PinStatus) int {
		if c := strings.Compare(a.Surface, b.Surface); c != 0 {
			return c
		}
		return strings.Compare(a.Tool, b.Tool)
	})
	return out
}

// reportPins audits each tool that is not served, once per definition:
// the first time its live digest is seen to differ from its pin.
func (g *Gateway) reportPins() {
	rev := g.rev.Load()
	list := g.unpinned()
	p := g.pins
	p.mu.Lock()
	var fresh []PinStatus
	seen := make(map[pinKey]bool, len(list))
	for _, u := range list {
		k := pinKey{u.Surface, u.Tool}
		seen[k] = true
		if d, ok := p.reported[k]; ok && d == pin.Digest(u.Live) {
			continue
		}
		p.reported[k] = pin.Digest(u.Live)
		fresh = append(fresh, u)
	}
	for k := range p.reported {
		if !seen[k] {
			delete(p.reported, k) // served again: a later change is news
		}
	}
	p.mu.Unlock()
	for _, u := range fresh {
		ev := callpipe.NewEvent("", callpipe.Provider(u.Provider), "pin", u.Surface, u.Tool)
		ev.Decision = u.Status
		ev.Revision = rev.ws.Revision
		ev.Reason = rev.snap.Lock.Refusal(u.Surface, u.Tool, pin.Digest(u.Live)).Error()
		if len(u.Changes) > 0 {
			// What changed, field by field, so the audit shows the rug
			// pull itself and not only two digests.
			ev.Reason += "; changed: " + g.runner.Redact(pin.DiffSummary(u.Changes))
		}
		g.log.Warn("a tool's definition differs from its pin; it is hidden and refused", "surface", u.Surface, "tool", u.Tool, "status", u.Status, "pinned", u.Pinned, "live", u.Live)
		if err := g.pipe.Journal().Append(ev); err != nil {
			g.log.Error("audit append failed for a changed tool definition", "err", err)
		}
	}
}

// PinStatus is one tool the lock keeps from being served, as the status
// API shows it.
type PinStatus struct {
	// Provider is command (a pack) or mcp (a proxied server).
	Provider string `json:"provider"`
	Surface  string `json:"surface"`
	Tool     string `json:"tool"`
	// Status is changed, new or invalid (pin.Status).
	Status string `json:"status"`
	Pinned string `json:"pinned,omitempty"`
	Live   string `json:"live,omitempty"`
	// Changes are the fields of the definition that differ from the pinned
	// one (when the lock records it).
	Changes []pin.Change `json:"changes,omitempty"`
}

// canonical is raw's canonical definition, nil when it has none.
func canonical(raw json.RawMessage) json.RawMessage {
	c, _, err := pin.CanonicalDefinition(raw)
	if err != nil {
		return nil
	}
	return c
}

// PinsStatus is the pinning part of /admin/status.
type PinsStatus struct {
	// Lock is the lock file; Present whether a lock is in force.
	Lock    string `json:"lock"`
	Present bool   `json:"present"`
	Pinned  int    `json:"pinned"`
	// Error says why the file on disk is not the lock in force.
	Error string `json:"error,omitempty"`
	// Unpinned are the tools hidden and refused.
	Unpinned []PinStatus `json:"unpinned"`
}

func (g *Gateway) pinsStatus() PinsStatus {
	rev := g.rev.Load()
	g.pins.mu.Lock()
	st := PinsStatus{Lock: g.pins.path, Present: rev.snap.Lock != nil, Error: g.pins.err}
	g.pins.mu.Unlock()
	if rev.snap.Lock != nil {
		st.Pinned = lockLen(rev.snap.Lock)
	}
	if st.Unpinned = g.unpinned(); st.Unpinned == nil {
		st.Unpinned = []PinStatus{}
	}
	return st
}
