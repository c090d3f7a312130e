package grantcheck

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/toolgate/toolgate/tiers"
	"github.com/toolgate/toolgate/workspace"
)

// Compile builds the immutable policy of a loaded workspace: every member's
// effects, tier, scopes and compiled input schema, and for each agent an
// index of exact grants, bulk grants and compiled param_constraints. Every
// problem is reported at once as a workspace.ErrorList at the position of
// the grant, constraint or command at fault.
func Compile(ws *workspace.Workspace) (*Policy, error) {
	p, err := compile(ws)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// compile is Compile and CompileLoaded: the policy, with errors or not.
func compile(ws *workspace.Workspace) (*Policy, error) {
	wsDir, err := filepath.Abs(filepath.Dir(ws.Path))
	if err != nil {
		return nil, fmt.Errorf("workspace directory of %s: %w", ws.Path, err)
	}
	c := &compiler{ws: ws, dmg: newLoadDamage(ws), p: &Policy{wsDir: wsDir, surfaces: map[string]*surface{}, agents: map[string]*agent{}}}
	for _, s := range ws.MCPServers {
		c.server(s)
	}
	for _, pk := range ws.CommandPacks {
		c.pack(pk)
	}
	for _, a := range ws.Agents {
		c.agent(a)
	}
	return c.p, c.errs.Err()
}

type compiler struct {
	ws *workspace.Workspace
	// dmg is what load errors leave uncertain (see CompileLoaded).
	dmg  *loadDamage
	p    *Policy
	errs workspace.ErrorList
}

func (c *compiler) errorf(pos workspace.Pos, format string, args ...any) {
	c.errs = append(c.errs, workspace.Errorf(pos, format, args...))
}

func (c *compiler) addSurface(s *surface) {
	c.p.surfaces[s.id] = s
	c.p.order = append(c.p.order, s.id)
}

// baseDir is a cwd as declared, resolved against the workspace directory;
// relative path_within arguments are resolved against it.
func baseDir(wsDir, cwd string) string {
	switch {
	case cwd == "":
		return wsDir
	case filepath.IsAbs(cwd):
		return filepath.Clean(cwd)
	}
	return filepath.Join(wsDir, cwd)
}

func (c *compiler) pack(pk *workspace.CommandPack) {
	s := &surface{id: pk.ID, kind: KindPackSurface, pack: pk, members: map[string]*member{}, listed: true}
	for _, cmd := range pk.Commands {
		cwd := cmd.Cwd
		if cwd == "" {
			cwd = pk.Cwd
		}
		m := newMember(cmd.ID, cmd.Description, cmd.Effects,
			tiers.Resolve(pk.Permission, pk.PermissionOverrides, cmd.ID), cmd.Scopes, baseDir(c.p.wsDir, cwd))
		m.structured = cmd.Output.Parse == "json"
		raw, err := marshalInputs(cmd.Inputs)
		if err == nil {
			m.schema, err = compileSchema("toolgate:///"+pk.ID+"/"+cmd.ID+".json", raw)
		}
		if err != nil && !c.dmg.members[toolKey{pk.ID, cmd.ID}] {
			c.errorf(cmd.Pos, "command %s:%s: inputs: %v", pk.ID, cmd.ID, err)
		}
		s.members[cmd.ID] = m
		s.order = append(s.order, cmd.ID)
	}
	c.addSurface(s)
}

// server records what the workspace says about a server's tools; the
// tools themselves are only known once listed (WithServerTools).
func (c *compiler) server(sv *workspace.MCPServer) {
	s := &surface{id: sv.ID, kind: KindMCPSurface, server: sv, members: map[string]*member{}}
	var names []string
	for k := range sv.Effects {
		names = append(names, k)
	}
	for k := range sv.PermissionOverrides {
		names = append(names, k)
	}
	for k := range sv.ScopeOverrides {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range slices.Compact(names) {
		c.declareServerMember(s, n)
	}
	c.addSurface(s)
}

// declareServerMember adds a tool the workspace names but nobody listed.
func (c *compiler) declareServerMember(s *surface, name string) {
	if _, ok := s.members[name]; ok {
		return
	}
	s.members[name] = serverMember(s.server, name, nil, baseDir(c.p.wsDir, s.server.Cwd))
	s.order = append(s.order, name)
}

// serverMember resolves one server tool: effects as declared, else read
// only when the server is trusted and says readOnlyHint, else write.
func serverMember(sv *workspace.MCPServer, name string, readOnlyHint *bool, dir string) *member {
	e, declared := sv.Effects[name]
	if !declared || e == "" {
		e = workspace.EffectWrite
		if sv.TrustAnnotations && readOnlyHint != nil && *readOnlyHint {
			e = workspace.EffectRead
		}
	}
	scopes := sv.Scopes
	if o, ok := sv.ScopeOverrides[name]; ok {
		scopes = o
	}
	return newMember(name, "", e, tiers.Resolve(sv.Permission, sv.PermissionOverrides, name), scopes, dir)
}

func (c *compiler) agent(a *workspace.Agent) {
	ag := &agent{id: a.ID, scopes: map[string]bool{}, scopeList: a.Scopes,
		exact: map[toolKey]*grant{}, bulk: map[string]*grant{}}
	for _, sc := range a.Scopes {
		ag.scopes[sc] = true
	}
	for _, g := range a.Grants {
		cg := c.grant(a, g)
		if cg == nil {
			continue
		}
		if cg.bulk() {
			if prev, dup := ag.bulk[cg.cap.Surface]; dup {
				c.errorf(g.Pos, "agent %q: %s grants surface %q again (already granted by %s at %s); keep one", a.ID, g.Op, cg.cap.Surface, prev.text, prev.pos)
				continue
			}
			ag.bulk[cg.cap.Surface] = cg
		} else {
			key := toolKey{cg.cap.Surface, cg.cap.Member}
			if prev, dup := ag.exact[key]; dup {
				c.errorf(g.Pos, "agent %q: %s grants %s again (already granted by %s at %s); keep one", a.ID, g.Op, cg.cap, prev.text, prev.pos)
				continue
			}
			ag.exact[key] = cg
		}
		ag.grants = append(ag.grants, cg)
	}
	c.p.agents[a.ID] = ag
	c.p.agentOrder = append(c.p.agentOrder, a.ID)
}

// grant resolves one grant entry, or records why it is refused.
func (c *compiler) grant(a *workspace.Agent, g *workspace.Grant) *grant {
	if g.Damaged {
		return nil // its load errors are reported; what it means depends on their fix
	}
	where := fmt.Sprintf("agent %q: grant %s", a.ID, g.Op)
	capab, err := Parse(g.Op)
	if err != nil {
		c.errorf(g.Pos, "agent %q: %v", a.ID, err)
		return nil
	}
	if capab.Kind == KindAll {
		c.errorf(g.Pos, "%s: a grant of every tool on every surface is refused (it is the fail-open shape); grant surfaces (pack:<id>, server:<id>) or tools (tool:<surface>:<member>) by name", where)
		return nil
	}
	if capab.Kind == KindAlias {
		capab, err = c.resolveAlias(capab.Alias)
		if err != nil {
			var unknown *aliasUnknownError
			if !errors.As(err, &unknown) || !c.dmg.namesMayBeUnread() {
				c.errorf(g.Pos, "%s: %v", where, err)
			}
			return nil
		}
	}
	if c.dmg.unsettled[capab.Surface] {
		return nil
	}
	s := c.p.surfaces[capab.Surface]
	if s == nil {
		if !c.dmg.unreadSurfaces {
			c.errorf(g.Pos, "%s: %s", where, c.unknownSurface(capab.Surface))
		}
		return nil
	}
	switch {
	case capab.Kind == KindPack && s.kind != KindPackSurface:
		c.errorf(g.Pos, "%s: %q is an MCP server, not a command pack; write server:%s", where, s.id, s.id)
		return nil
	case capab.Kind == KindServer && s.kind != KindMCPSurface:
		c.errorf(g.Pos, "%s: %q is a command pack, not an MCP server; write pack:%s", where, s.id, s.id)
		return nil
	case capab.Kind == KindSurface && s.kind == KindPackSurface:
		capab.Kind = KindPack
	case capab.Kind == KindSurface:
		capab.Kind = KindServer
	}
	cg := &grant{text: g.Op, pos: g.Pos, cap: capab}
	switch capab.Kind {
	case KindPack:
		if !c.dmg.partialPacks[s.id] && !slices.ContainsFunc(s.order, func(n string) bool { return s.members[n].effects == workspace.EffectRead }) {
			c.errorf(g.Pos, "%s matches nothing: pack %q has no command with effects: read, and a bulk grant never covers a write; grant its commands one by one as tool:%s:<command>", where, s.id, s.id)
			return nil
		}
	case KindTool:
		if s.kind == KindPackSurface {
			if _, ok := s.members[capab.Member]; !ok {
				if !c.dmg.unreadCommands[s.id] {
					c.errorf(g.Pos, "%s: pack %q has no command %q%s; its commands are: %s", where, s.id, capab.Member, Suggest(capab.Member, s.order), strings.Join(s.order, ", "))
				}
				return nil
			}
		} else {
			c.declareServerMember(s, capab.Member)
		}
	}
	if len(g.ParamConstraints) > 0 && cg.bulk() {
		c.errorf(g.Pos, "%s: param_constraints bind one tool's parameters, so they are only allowed on a single-tool grant; write op: tool:%s:<member> for each tool you want bounded", where, s.id)
		return nil
	}
	ok := true
	for _, wc := range g.ParamConstraints {
		if m := s.members[capab.Member]; s.kind == KindPackSurface && m.schema != nil && !m.schema.props[wc.Param] && !c.dmg.members[toolKey{s.id, capab.Member}] {
			c.errorf(wc.Pos, "%s: param_constraints name parameter %q, which %s:%s does not declare in inputs.properties (it declares: %s)",
				where, wc.Param, s.id, capab.Member, strings.Join(slices.Sorted(maps.Keys(m.schema.props)), ", "))
			ok = false
			continue
		}
		k, err := compileConstraint(wc, c.p.wsDir)
		if err != nil {
			c.errorf(wc.Pos, "%s: %v", where, err)
			ok = false
			continue
		}
		cg.constraints = append(cg.constraints, k)
	}
	if !ok || !c.checkBoundLayout(where, s, capab.Member, cg) {
		return nil
	}
	return cg
}

// resolveAlias finds the one pack command <pack>-<command> names.
func (c *compiler) resolveAlias(alias string) (Capability, error) {
	var found []Capability
	for _, id := range c.p.order {
		s := c.p.surfaces[id]
		if s.kind != KindPackSurface {
			continue
		}
		cmd, ok := strings.CutPrefix(alias, id+"-")
		if _, exists := s.members[cmd]; ok && exists {
			found = append(found, Tool(id, cmd))
		}
	}
	switch len(found) {
	case 0:
		return Capability{}, &aliasUnknownError{alias}
	case 1:
		return found[0], nil
	}
	names := make([]string, len(found))
	for i, f := range found {
		names[i] = f.String()
	}
	return Capability{}, fmt.Errorf("the alias %q is ambiguous: it could be %s; write the one you mean in the tool:<pack>:<command> form", alias, strings.Join(names, " or "))
}

func (c *compiler) unknownSurface(id string) string {
	switch id {
	case SurfaceHarness:
		return "the harness surface names tools the harness itself provides (Read, Edit, …); toolgate does not serve them, so a grant cannot name them — list them in the harness allowlist"
	case SurfaceShell:
		return "the shell surface names shell commands; toolgate serves no shell — declare the program in a command pack and grant its commands"
	}
	ids := slices.Clone(c.p.order)
	sort.Strings(ids)
	declared := strings.Join(ids, ", ")
	if declared == "" {
		declared = "none"
	}
	return fmt.Sprintf("surface %q is not declared (declared surfaces: %s); declare it under mcp_servers or command_packs, or fix the name", id, declared)
}
