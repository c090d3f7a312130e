package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// lockedNames is, per proxied server in toolgate.lock, the names of its
// pinned tools — and, when the servers were listed live, the names they
// list now (a tool added since pinning is shown as not pinned, not as a
// typo): what the workspace's tool names are checked against. Nil without
// a lock.
func (d *decider) lockedNames() map[string][]string {
	if d.lock == nil {
		return nil
	}
	out := map[string][]string{}
	for _, s := range d.ws.MCPServers {
		pins, ok := d.lock.Surfaces[s.ID]
		if !ok {
			continue
		}
		names := slices.Collect(maps.Keys(pins))
		if !d.offline {
			for _, t := range d.tools[s.ID] {
				names = append(names, t.Name)
			}
		}
		slices.Sort(names)
		out[s.ID] = slices.Compact(names)
	}
	return out
}

// nameWarnings says which proxied tool names could not be checked: all of
// them without a lock, a server's when the lock does not pin it.
func (d *decider) nameWarnings() []packs.Warning {
	if len(d.ws.MCPServers) == 0 {
		return nil
	}
	if d.lock == nil {
		return []packs.Warning{{Pos: workspace.Pos{File: d.ws.Path, Line: 1, Col: 1},
			Msg: fmt.Sprintf("no %s beside the workspace: the proxied tool names in grants, effects, overrides and approval rules cannot be checked, so a typo loads silently; run `toolgate pin -w %s` to record the servers' tools", pin.FileName, d.ws.Path)}}
	}
	var out []packs.Warning
	for _, s := range d.ws.MCPServers {
		if _, ok := d.lock.Surfaces[s.ID]; !ok {
			out = append(out, packs.Warning{Pos: s.Pos, Msg: fmt.Sprintf("server %q is not in %s: its tool names cannot be checked; run `toolgate pin -w %s --update`", s.ID, pin.FileName, d.ws.Path)})
		}
	}
	return out
}

// summary is the policy decided with, per agent the concrete tools (from
// the lock or the live listing) with their effects, tier and outcome; a
// tool whose definition is not its pin is shown refused, as it is.
func (d *decider) summary() grantcheck.Summary {
	sum := d.snap.Policy.Summary()
	for i := range sum.Agents {
		for j, t := range sum.Agents[i].Tools {
			surface, member, _ := strings.Cut(t.Tool, ":")
			tool := &sum.Agents[i].Tools[j]
			if err := d.snap.PinRefusal(surface, member); err != nil {
				tool.Decision = grantcheck.Deny
				tool.Refusal = "its definition is not the pinned one (`toolgate pin --diff` shows what changed)"
			}
			// Approval rules never approve a strict call or a read.
			if tool.Decision == grantcheck.Approval && t.Tier == workspace.TierCautious && t.Effects == workspace.EffectWrite {
				tool.ApprovedBy = d.snap.Rules.Naming(sum.Agents[i].ID, surface, member)
			}
		}
	}
	return sum
}

// wildcardWriteWarnings warns of each server: or tool:<server>:* grant
// that covers a write: the agent gets every write the server lists, now
// and after the next `pin --update`, without the workspace naming it.
func wildcardWriteWarnings(ws *workspace.Workspace, sum grantcheck.Summary) []packs.Warning {
	var out []packs.Warning
	for _, a := range ws.Agents {
		var as *grantcheck.AgentSummary
		for i := range sum.Agents {
			if sum.Agents[i].ID == a.ID {
				as = &sum.Agents[i]
			}
		}
		if as == nil {
			continue
		}
		for _, g := range a.Grants {
			c, err := grantcheck.Parse(g.Op)
			if err != nil || (c.Kind != grantcheck.KindServer && c.Kind != grantcheck.KindSurface) {
				continue
			}
			var writes []string
			for _, t := range as.Tools {
				if t.Grant == g.Op && t.Effects == workspace.EffectWrite {
					writes = append(writes, t.Tool)
				}
			}
			if len(writes) > 0 {
				out = append(out, packs.Warning{Pos: g.Pos, Msg: fmt.Sprintf("agent %q: %s covers %d write(s): %s; grant writes by name (tool:<server>:<tool>) so a review sees each one", a.ID, g.Op, len(writes), strings.Join(writes, ", "))})
			}
		}
	}
	return out
}
