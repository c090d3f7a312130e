package main

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// lockedNames is what the workspace's proxied tool names are checked
// against (gateway.LockedNames): per server in toolgate.lock its pinned
// tools and, when the servers were listed live, the names they list now
// (a tool added since pinning is shown as not pinned, not as a typo). Nil
// without a lock.
func (d *decider) lockedNames() map[string][]string {
	return gateway.LockedNames(d.ws, d.lock, d.liveNames())
}

// liveNames are the names each server listed now; nil with --offline.
func (d *decider) liveNames() map[string][]string {
	if d.offline {
		return nil
	}
	out := make(map[string][]string, len(d.tools))
	for id, tools := range d.tools {
		for _, t := range tools {
			out[id] = append(out[id], t.Name)
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
