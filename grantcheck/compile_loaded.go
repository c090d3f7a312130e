package grantcheck

import (
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/workspace"
)

// CompileLoaded is Compile for a workspace that may hold load errors (see
// workspace.Load): it compiles what loaded and returns the policy along
// with every further problem, so that `toolgate check` lists load and
// grant errors together. A problem that may only be a consequence of a
// load error is left out — the load error is what to fix, and the next
// check reports what remains:
//
//   - a grant (or its constraints) holding a load error itself;
//   - anything about a grant naming a surface whose identity failed to
//     load (no valid id, an id declared twice, a `use:` that failed);
//   - a surface, command or alias that is not declared, when a declaration
//     of that kind could not be read far enough to know its name;
//   - `pack:<id>` matching no read command, when one of the pack's commands
//     holds a load error (its effects may be the mistake);
//   - a command's input schema, and constraints checked against it, when
//     that command holds a load error.
//
// On a workspace that loaded cleanly it is Compile, returning the policy
// even with errors. A policy returned with errors is for finding more
// problems (approval rules), never for deciding calls.
func CompileLoaded(ws *workspace.Workspace) (*Policy, error) {
	return compile(ws)
}

// loadDamage is what a workspace's load errors leave uncertain; all empty
// for a workspace that loaded cleanly.
type loadDamage struct {
	// unsettled are surface ids whose declaration's identity is in doubt.
	unsettled map[string]bool
	// unreadSurfaces: some surface could not be read far enough to know
	// its id, so an undeclared surface may be that one.
	unreadSurfaces bool
	// unreadAgents is unreadSurfaces for agents.
	unreadAgents bool
	// unreadCommands are packs that may lack a command they declare.
	unreadCommands map[string]bool
	// partialPacks are packs with a command holding a load error, or
	// unread commands: what their commands' effects are is in doubt.
	partialPacks map[string]bool
	// members are the commands holding a load error.
	members map[toolKey]bool
}

func newLoadDamage(ws *workspace.Workspace) *loadDamage {
	d := &loadDamage{
		unsettled: map[string]bool{}, unreadSurfaces: ws.Unread.Surfaces, unreadAgents: ws.Unread.Agents,
		unreadCommands: map[string]bool{}, partialPacks: map[string]bool{}, members: map[toolKey]bool{},
	}
	ids := map[string]int{}
	for _, s := range ws.MCPServers {
		ids[s.ID]++
	}
	for _, p := range ws.CommandPacks {
		ids[p.ID]++
	}
	doubtful := func(damaged bool, id string) bool {
		return damaged && (ids[id] > 1 || !workspace.IDPattern.MatchString(id))
	}
	for _, s := range ws.MCPServers {
		if doubtful(s.Damaged, s.ID) {
			d.unsettled[s.ID] = true
		}
	}
	for _, p := range ws.CommandPacks {
		if doubtful(p.Damaged, p.ID) || p.Damaged && p.Use != "" && !p.Bundled {
			d.unsettled[p.ID] = true
		}
		if p.UnreadCommands {
			d.unreadCommands[p.ID], d.partialPacks[p.ID] = true, true
		}
		for _, c := range p.Commands {
			if c.Damaged {
				d.members[toolKey{p.ID, c.ID}], d.partialPacks[p.ID] = true, true
			}
		}
	}
	return d
}

// namesMayBeUnread reports whether some surface or command name may be
// missing from what loaded.
func (d *loadDamage) namesMayBeUnread() bool {
	return d.unreadSurfaces || len(d.unreadCommands) > 0 || len(d.unsettled) > 0
}

// aliasUnknownError is the refusal of an alias that names no pack command.
type aliasUnknownError struct{ alias string }

func (e *aliasUnknownError) Error() string {
	return fmt.Sprintf("the alias %q names no pack command (an alias is <pack>-<command>); write tool:<surface>:<member>", e.alias)
}

// SettledRules returns the approval rules of ws whose checks do not depend
// on declarations with load errors (the rules CompileApprovalRules should
// see on a policy from CompileLoaded): a rule holding a load error, or
// naming an agent, surface or command that may be among those that failed
// to load, is left out, as grants are. On a clean workspace it is every
// rule.
func (p *Policy) SettledRules(ws *workspace.Workspace) []*workspace.ApprovalRule {
	d := newLoadDamage(ws)
	var out []*workspace.ApprovalRule
	for _, r := range ws.Gateway.Approvals.Rules {
		if !r.Damaged && p.ruleSettled(d, r) {
			out = append(out, r)
		}
	}
	return out
}

func (p *Policy) ruleSettled(d *loadDamage, r *workspace.ApprovalRule) bool {
	if _, ok := p.agents[r.Agent]; !ok && d.unreadAgents {
		return false
	}
	c, err := Parse(r.Capability)
	if err != nil {
		return true // its own mistake, reported
	}
	if c.Kind == KindAlias {
		var unknown *aliasUnknownError
		if c, err = (&compiler{p: p}).resolveAlias(c.Alias); err != nil {
			return !errors.As(err, &unknown) || !d.namesMayBeUnread()
		}
	}
	if d.unsettled[c.Surface] {
		return false
	}
	s := p.surfaces[c.Surface]
	switch {
	case s == nil:
		return !d.unreadSurfaces
	case c.Kind == KindTool && s.kind == KindPackSurface && s.members[c.Member] == nil:
		return !d.unreadCommands[c.Surface]
	}
	return true
}
