package workspace

import (
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// IDPattern is what surface ids, member names and agent ids must match.
var IDPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// validator runs the structural cross-checks that need the whole file.
type validator struct {
	ws   *Workspace
	errs *ErrorList
}

func (v *validator) errorf(p Pos, format string, args ...any) {
	*v.errs = append(*v.errs, Errorf(p, format, args...))
}

func (v *validator) run(root *yaml.Node) {
	ws := v.ws
	switch k, val := mappingValue(root, "version"); {
	case k == nil:
		v.errorf(Pos{File: ws.Path, Line: root.Line, Col: root.Column}, "the workspace has no version; add version: 1 at the top")
	case ws.Version != FormatVersion && resolveAlias(val).Tag == "!!int":
		v.errorf(Pos{File: ws.Path, Line: k.Line, Col: k.Column}, "version must be 1 (the only workspace format this toolgate reads)")
	}
	v.gateway(root)
	surfaces := map[string]Pos{}
	// claim reserves a surface id, reporting whether it is usable.
	claim := func(id string, p Pos, what string) bool {
		if id == "" {
			v.errorf(p, "%s has no id; add id: <name>", what)
			return false
		}
		ok := true
		if !IDPattern.MatchString(id) {
			v.errorf(p, "%s id %q may only use letters, digits, '_', '.' and '-'", what, id)
			ok = false
		}
		if prev, dup := surfaces[id]; dup {
			v.errorf(p, "duplicate surface id %q (first declared at %s); MCP servers and command packs share one namespace, rename one", id, prev)
			return false
		}
		surfaces[id] = p
		return ok
	}
	for _, s := range ws.MCPServers {
		n := len(*v.errs)
		if !claim(s.ID, s.Pos, "mcp server") && !IDPattern.MatchString(s.ID) {
			ws.Unread.Surfaces = true
		}
		v.server(s)
		s.Damaged = s.Damaged || len(*v.errs) > n
	}
	for _, p := range ws.CommandPacks {
		n := len(*v.errs)
		// A failed `use:` has already been reported and has no id to claim.
		if p.ID != "" || p.Use == "" {
			if !claim(p.ID, p.Pos, "command pack") && !IDPattern.MatchString(p.ID) {
				ws.Unread.Surfaces = true
			}
		}
		v.pack(p)
		p.Damaged = p.Damaged || len(*v.errs) > n
	}
	agents := map[string]Pos{}
	for _, a := range ws.Agents {
		n := len(*v.errs)
		switch prev, dup := agents[a.ID]; {
		case a.ID == "":
			v.errorf(a.Pos, "agent has no id; add id: <name>")
			ws.Unread.Agents = true
		case dup:
			v.errorf(a.Pos, "duplicate agent id %q (first declared at %s); agent ids must be unique", a.ID, prev)
		case !IDPattern.MatchString(a.ID):
			v.errorf(a.Pos, "agent id %q may only use letters, digits, '_', '.' and '-'", a.ID)
			ws.Unread.Agents = true
		default:
			agents[a.ID] = a.Pos
		}
		a.Damaged = a.Damaged || len(*v.errs) > n
	}
}

// mappingValue finds key in a mapping node.
func mappingValue(n *yaml.Node, key string) (k, val *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// credentialRefs checks every {credential.x} in a template is declared and
// that no other placeholder appears where only credentials may.
func (v *validator) credentialRefs(p Pos, where, tmpl string) {
	for _, s := range ParseTemplate(tmpl) {
		if s.Param == "" {
			continue
		}
		name, ok := s.IsCredential()
		if !ok {
			v.errorf(p, "%s: placeholder {%s} is not allowed here; only {credential.<name>} may appear in env and headers", where, s.Param)
			continue
		}
		if _, declared := v.ws.Credentials[name]; !declared {
			v.errorf(p, "%s references credential %q, which is not declared; add it under credentials: (for example %s: {env: VARIABLE})", where, name, name)
		}
	}
}

func (v *validator) server(s *MCPServer) {
	switch {
	case len(s.Command) == 0 && s.URL == "":
		v.errorf(s.Pos, "mcp server %q needs command: [program, args...] (stdio) or url: (HTTP)", s.ID)
	case len(s.Command) > 0 && s.URL != "":
		v.errorf(s.Pos, "mcp server %q has both command and url; a server is either stdio or HTTP", s.ID)
	}
	switch s.Transport {
	case "", "streamable-http", "sse":
		if s.Transport != "" && s.URL == "" {
			v.errorf(s.Pos, "mcp server %q: transport %q needs a url", s.ID, s.Transport)
		}
	case "stdio":
		if len(s.Command) == 0 {
			v.errorf(s.Pos, "mcp server %q: transport stdio needs command", s.ID)
		}
	} // any other value was refused by its enum tag when decoded
	for _, e := range s.Command {
		if strings.Contains(e, "{"+CredentialPrefix) {
			v.errorf(s.Pos, "mcp server %q: {credential.*} may not appear in command; pass secrets through env", s.ID)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		v.credentialRefs(keyPos(s.KeyPos, "env."+k, s.Pos), "mcp server "+s.ID+" env "+k, s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		v.credentialRefs(keyPos(s.KeyPos, "headers."+k, s.Pos), "mcp server "+s.ID+" header "+k, s.Headers[k])
	}
}

func keyPos(m map[string]Pos, key string, fallback Pos) Pos {
	if p, ok := m[key]; ok {
		return p
	}
	return fallback
}

func (v *validator) pack(p *CommandPack) {
	for _, ref := range p.CredentialsRef {
		if _, ok := v.ws.Credentials[ref]; !ok {
			v.errorf(p.Pos, "pack %q: credentials_ref names %q, which is not declared under credentials:", p.ID, ref)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		v.credentialRefs(keyPos(p.KeyPos, "env."+k, p.Pos), "pack "+p.ID+" env "+k, p.Env[k])
	}
	cmds := map[string]Pos{}
	for _, c := range p.Commands {
		n := len(*v.errs)
		switch prev, dup := cmds[c.ID]; {
		case c.ID == "":
			v.errorf(c.Pos, "pack %q: a command has no id; add id: <name>", p.ID)
			p.UnreadCommands = true
		case dup:
			v.errorf(c.Pos, "pack %q: duplicate command id %q (first declared at %s)", p.ID, c.ID, prev)
		case !IDPattern.MatchString(c.ID):
			v.errorf(c.Pos, "pack %q: command id %q may only use letters, digits, '_', '.' and '-'", p.ID, c.ID)
			p.UnreadCommands = true
		default:
			cmds[c.ID] = c.Pos
		}
		v.command(p, c)
		c.Damaged = c.Damaged || len(*v.errs) > n
	}
	overrides := map[string][]string{
		"permission_overrides": slices.Sorted(maps.Keys(p.PermissionOverrides)),
		"timeout_overrides":    slices.Sorted(maps.Keys(p.TimeoutOverrides)),
		"max_memory_overrides": slices.Sorted(maps.Keys(p.MaxMemoryOverrides)),
	}
	for _, field := range slices.Sorted(maps.Keys(overrides)) {
		for _, k := range overrides[field] {
			if _, ok := cmds[k]; !ok {
				v.errorf(keyPos(p.KeyPos, field+"."+k, p.Pos), "pack %q: %s names command %q, which the pack does not have", p.ID, field, k)
			}
		}
	}
}

// shells are programs that would re-parse their arguments as a script.
var shells = []string{"sh", "bash", "zsh", "dash", "fish", "ksh", "ash", "csh", "tcsh"}

// shellOperators as bare argv elements show a template written for a shell.
var shellOperators = []string{"|", ";", "&&", "||", ">", ">>", "<", "&", "<<", "2>", "2>&1", "|&"}

// dashCRE is a shell's -c among combined flags (-c, -ec, -lc …), compiled
// when first needed.
var dashCRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-[A-Za-z]*c[A-Za-z]*$`) })

func (v *validator) command(p *CommandPack, c *Command) {
	at := func(i int) Pos {
		if i < len(c.ArgvPos) {
			return c.ArgvPos[i]
		}
		return c.Pos
	}
	name := p.ID + ":" + c.ID
	if len(c.Argv) == 0 {
		v.errorf(c.Pos, "command %s has no argv; write argv: [program, args...]", name)
	}
	props := schemaProperties(c.Inputs)
	for i, e := range c.Argv {
		if slices.Contains(shellOperators, e) {
			v.errorf(at(i), "command %s: argv element %q is a shell operator; argv is never run by a shell — declare one command per program instead of composing them", name, e)
		}
		if slices.Contains(shells, path.Base(e)) {
			for j := i + 1; j < len(c.Argv); j++ {
				if dashCRE().MatchString(c.Argv[j]) {
					v.errorf(at(i), "command %s runs a shell (%s %s); packs run programs directly — put the program itself in argv", name, e, c.Argv[j])
					break
				}
			}
		}
		if !strings.Contains(e, "{") {
			continue // no placeholder: most elements, not split to be checked
		}
		for _, s := range ParseTemplate(e) {
			if cred, ok := s.IsCredential(); ok {
				v.errorf(at(i), "command %s: {credential.%s} in argv would expose the secret in ps and the audit; pass it through the pack's env instead", name, cred)
				continue
			}
			if s.Param != "" && !slices.Contains(props, s.Param) {
				v.errorf(at(i), "command %s: argv placeholder {%s} is not declared in inputs.properties; declare it (for example %s: {type: string})", name, s.Param, s.Param)
			}
		}
	}
	if c.Inputs != nil {
		if t, ok := c.Inputs["type"]; ok && t != "object" {
			v.errorf(c.Pos, "command %s: inputs must be a JSON Schema with type: object", name)
		}
	}
	var placeholders []string
	if len(c.Spread) > 0 || len(c.AllowDash) > 0 {
		placeholders = Placeholders(c.Argv)
	}
	for _, s := range c.Spread {
		if !slices.Contains(placeholders, s) {
			v.errorf(c.Pos, "command %s: spread names %q, which is not an argv placeholder", name, s)
		}
		if !slices.Contains(c.Argv, "{"+s+"}") {
			v.errorf(c.Pos, "command %s: spread parameter %q must be a whole argv element \"{%s}\"", name, s, s)
		}
	}
	for _, s := range c.AllowDash {
		if !slices.Contains(placeholders, s) {
			v.errorf(c.Pos, "command %s: allow_dash names %q, which is not an argv placeholder", name, s)
		}
	}
	for i, s := range c.Program {
		if !slices.Contains(props, s) {
			p := c.Pos
			if i < len(c.ProgramPos) {
				p = c.ProgramPos[i]
			}
			v.errorf(p, "command %s: program names %q, which is not declared in inputs.properties; declare it (for example %s: {type: string}) or remove it from program", name, s, s)
		}
	}
	v.creates(name, c, props)
	for _, s := range ParseTemplate(c.Output.WriteTo) {
		if s.Param != "" && !slices.Contains(props, s.Param) {
			v.errorf(c.Output.Pos, "command %s: output.write_to placeholder {%s} is not declared in inputs.properties", name, s.Param)
		}
	}
	if c.Effects == "" {
		c.Effects = EffectWrite
	}
}

// schemaProperties lists the property names of an object schema.
func schemaProperties(schema map[string]any) []string {
	props, _ := schema["properties"].(map[string]any)
	out := make([]string, 0, len(props))
	for k := range props {
		out = append(out, k)
	}
	return out
}
