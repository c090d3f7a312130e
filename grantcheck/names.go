package grantcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

// CheckServerNames refuses every proxied tool name the workspace writes —
// in a grant, an effects, permission_overrides, scope_overrides or
// timeout_overrides key, or an approval rule — that its server does not
// list, where listed gives each server's tool names (toolgate.lock's, for
// `toolgate check`). A server absent from listed is not checked (the
// caller says so). Each error is at the name's position, with the nearest
// listed name as a did-you-mean: a typo would otherwise load silently and
// turn a read into an undeclared write.
func CheckServerNames(ws *workspace.Workspace, listed map[string][]string) workspace.ErrorList {
	var errs workspace.ErrorList
	servers := map[string]bool{}
	for _, s := range ws.MCPServers {
		servers[s.ID] = true
	}
	known := func(surface, member string) (bool, string) {
		names, ok := listed[surface]
		if !ok || !servers[surface] || slices.Contains(names, member) {
			return true, ""
		}
		return false, Suggest(member, names)
	}
	unknown := func(pos workspace.Pos, what, surface, member, hint string) {
		errs = append(errs, workspace.Errorf(pos, "%s names tool %q, which server %q does not list (toolgate.lock)%s; fix the name, or run `toolgate pin --update` if the server added it", what, member, surface, hint))
	}
	for _, s := range ws.MCPServers {
		if _, ok := listed[s.ID]; !ok {
			continue
		}
		for _, field := range []struct {
			name string
			keys []string
		}{
			{"effects", slices.Collect(maps.Keys(s.Effects))},
			{"permission_overrides", slices.Collect(maps.Keys(s.PermissionOverrides))},
			{"scope_overrides", slices.Collect(maps.Keys(s.ScopeOverrides))},
			{"timeout_overrides", slices.Collect(maps.Keys(s.TimeoutOverrides))},
		} {
			slices.Sort(field.keys)
			for _, k := range field.keys {
				if ok, hint := known(s.ID, k); !ok {
					pos, found := s.KeyPos[field.name+"."+k]
					if !found {
						pos = s.Pos
					}
					unknown(pos, fmt.Sprintf("server %q %s", s.ID, field.name), s.ID, k, hint)
				}
			}
		}
	}
	for _, a := range ws.Agents {
		for _, g := range a.Grants {
			c, err := Parse(g.Op)
			if err != nil || c.Kind != KindTool {
				continue // reported by Compile, or names no single tool
			}
			if ok, hint := known(c.Surface, c.Member); !ok {
				unknown(g.Pos, fmt.Sprintf("agent %q grant %q", a.ID, g.Op), c.Surface, c.Member, hint)
			}
		}
	}
	for _, r := range ws.Gateway.Approvals.Rules {
		c, err := Parse(r.Capability)
		if err != nil || c.Kind != KindTool {
			continue
		}
		if ok, hint := known(c.Surface, c.Member); !ok {
			unknown(r.Pos, fmt.Sprintf("approval rule %q", r.Capability), c.Surface, c.Member, hint)
		}
	}
	return errs
}

// Suggest is ` (did you mean "x"?)` for the name among names nearest to
// name, when one is near enough to be a typo of it; "" otherwise.
func Suggest(name string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		d := editDistance(strings.ToLower(name), strings.ToLower(n))
		if bestD < 0 || d < bestD || d == bestD && n < best {
			best, bestD = n, d
		}
	}
	limit := max(2, len([]rune(name))/3)
	if bestD < 0 || bestD > limit {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the optimal string alignment distance of a and b: the
// edits (insert, delete, substitute, swap two neighbours) from one to the
// other, so a transposed pair (grahp) costs one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 256 || len(rb) > 256 {
		return max(len(ra), len(rb)) // not a typo of anything; bound the cost
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
