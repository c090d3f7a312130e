package grantcheck

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// This file is the one mapping between harness allowlist entries (Claude
// Code's --allowed-tools and its kin) and capabilities, docs/harnesses.md. Parity,
// mcp-config and anything else comparing the two sides go through it, so the
// two sides can never be normalised differently.

// UnrecognisedError reports a harness entry that maps to no capability.
// Parity treats it as red: an entry nobody can parse is a reach nobody can
// bound, so it is reported with a reason and never dropped.
type UnrecognisedError struct {
	Entry  string
	Reason string
}

// Error says which entry and why, for parity's red verdict.
func (e *UnrecognisedError) Error() string {
	return fmt.Sprintf("harness entry %q is not recognised: %s", e.Entry, e.Reason)
}

// ErrNotExpressible is wrapped by HarnessEntry when a capability has no
// harness allowlist form.
var ErrNotExpressible = errors.New("no harness allowlist entry expresses this capability")

const mcpPrefix = "mcp__"

// The expressions are compiled when first used, not at start: every
// toolgate process runs this package's initialisers, few read a harness
// allowlist ({1,64} alone is ~1,000 allocations).
var (
	// harnessToolRE is a bare harness tool name: Read, WebFetch, TodoWrite.
	harnessToolRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`) })
	// bashRE is Bash(<cmd>), Bash(<cmd>:*) or Bash(<cmd> *).
	bashRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^Bash\((.*)\)$`) })
	// harnessNameRE is what a harness accepts as a whole tool name.
	harnessNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
)

// NormalizeEntry maps one harness allowlist entry to its capability:
//
//	mcp__<s>__<m>           tool:<s>:<m>
//	mcp__<s>, mcp__<s>__*   tool:<s>:*
//	Read, WebFetch, …       tool:harness:<Name>
//	Bash                    tool:shell:*
//	Bash(cmd), Bash(cmd:*),
//	Bash(cmd *)             tool:shell:<cmd>
//	*                       tool:* (expressible, refused in a grant)
//
// In mcp__ names the first "__" after the prefix ends the surface, so a
// surface id may contain "_" but not "__". Anything else returns an
// *UnrecognisedError saying why.
func NormalizeEntry(s string) (Capability, error) {
	unrecognised := func(format string, args ...any) (Capability, error) {
		return Capability{}, &UnrecognisedError{Entry: s, Reason: fmt.Sprintf(format, args...)}
	}
	switch {
	case s == "*":
		return Capability{Kind: KindAll}, nil
	case s == "Bash":
		return Capability{Kind: KindSurface, Surface: SurfaceShell}, nil
	case strings.HasPrefix(s, mcpPrefix):
		rest := s[len(mcpPrefix):]
		surface, member, hasMember := strings.Cut(rest, "__")
		if !ValidName(surface) {
			return unrecognised("%q is not a surface id (letters, digits, '_', '.', '-'; no wildcard)", surface)
		}
		if !hasMember || member == "*" {
			return Capability{Kind: KindSurface, Surface: surface}, nil
		}
		if !ValidName(member) {
			return unrecognised("%q is not a tool name (letters, digits, '_', '.', '-', or * alone)", member)
		}
		return Tool(surface, member), nil
	case harnessToolRE().MatchString(s):
		return Tool(SurfaceHarness, s), nil
	}
	if m := bashRE().FindStringSubmatch(s); m != nil {
		cmd := m[1]
		if c, ok := strings.CutSuffix(cmd, ":*"); ok {
			cmd = c
		} else if c, ok := strings.CutSuffix(cmd, " *"); ok {
			cmd = c
		}
		if !ValidName(cmd) || cmd == "*" {
			return unrecognised("Bash(%s) does not name one command; write Bash(<command>:*) for one program or bare Bash for any", m[1])
		}
		return Tool(SurfaceShell, cmd), nil
	}
	if name, _, ok := strings.Cut(s, "("); ok && harnessToolRE().MatchString(name) {
		return unrecognised("a specifier on %s has no capability form; only Bash takes one", name)
	}
	if surface, _, ok := strings.Cut(s, ":"); ok && strings.ToLower(surface) == "bash" {
		return unrecognised("the harness does not read %q (the bash: prefix is silently dropped); write Bash(%s:*)", s, strings.TrimPrefix(s, surface+":"))
	}
	return unrecognised("expected mcp__<server>__<tool>, mcp__<server>, a harness tool name such as Read, Bash, Bash(<command>:*) or *")
}

// HarnessEntry is the reverse of NormalizeEntry: the allowlist entry a
// harness needs for c. A surface wildcard prints as mcp__<s> (the form every
// harness version reads); tool:shell:<cmd> as Bash(<cmd>:*). Capabilities a
// harness cannot express — pack: (read commands only), aliases, a whole
// harness, names a harness rejects — return an error wrapping
// ErrNotExpressible; expand them against a Policy first.
func HarnessEntry(c Capability) (string, error) {
	fail := func(why string) (string, error) {
		return "", fmt.Errorf("%s: %s: %w", c, why, ErrNotExpressible)
	}
	switch c.Kind {
	case KindAll:
		return "*", nil
	case KindTool:
		switch c.Surface {
		case SurfaceHarness:
			if !harnessToolRE().MatchString(c.Member) {
				return fail("a harness tool is a bare CamelCase name")
			}
			return c.Member, nil
		case SurfaceShell:
			return "Bash(" + c.Member + ":*)", nil
		}
		if err := mcpSplittable(c.Surface); err != nil {
			return fail(err.Error())
		}
		e := mcpPrefix + c.Surface + "__" + c.Member
		if !harnessNameRE().MatchString(e) {
			return fail(fmt.Sprintf("the harness name %q must match %s", e, harnessNameRE()))
		}
		return e, nil
	case KindSurface, KindServer:
		switch c.Surface {
		case SurfaceShell:
			return "Bash", nil
		case SurfaceHarness:
			return fail("no entry grants every harness tool; list them one by one")
		}
		if err := mcpSplittable(c.Surface); err != nil {
			return fail(err.Error())
		}
		e := mcpPrefix + c.Surface
		if !harnessNameRE().MatchString(e) {
			return fail(fmt.Sprintf("the harness name %q must match %s", e, harnessNameRE()))
		}
		return e, nil
	case KindPack:
		return fail("a pack grant covers its read commands only; expand it with Policy.Capabilities")
	case KindAlias:
		return fail("an alias is resolved against the packs; expand it with Policy.Capabilities")
	}
	return fail("invalid capability")
}

// mcpSplittable reports why a surface id cannot sit in an mcp__ name so that
// NormalizeEntry reads it back: the first "__" after the prefix ends it.
func mcpSplittable(surface string) error {
	if strings.Contains(surface, "__") || strings.HasSuffix(surface, "_") {
		return fmt.Errorf("surface id %q contains \"__\" or ends in \"_\", so mcp__ names built from it are ambiguous", surface)
	}
	return nil
}

// NormalizeList maps a whole allowlist. Recognised entries come back as
// capabilities in order; every other entry is returned as an
// *UnrecognisedError, none dropped.
func NormalizeList(entries []string) ([]Capability, []*UnrecognisedError) {
	var caps []Capability
	var bad []*UnrecognisedError
	for _, e := range entries {
		c, err := NormalizeEntry(e)
		var u *UnrecognisedError
		switch {
		case err == nil:
			caps = append(caps, c)
		case errors.As(err, &u):
			bad = append(bad, u)
		default:
			bad = append(bad, &UnrecognisedError{Entry: e, Reason: err.Error()})
		}
	}
	return caps, bad
}

// Naming is how a harness spells an MCP tool to its model, and so in its
// allowlists. Claude Code's mcp__<server>__<tool> is the canonical form
// (docs/harnesses.md); the others are read back through NormalizeName, which
// resolves their lossy and ambiguous spellings against the known surfaces.
type Naming string

// The namings of the harnesses toolgate configures.
const (
	// NamingClaude is mcp__<server>__<tool>, mcp__<server> for a whole
	// server (also Cursor and VS Code).
	NamingClaude Naming = "claude"
	// NamingCodex groups a server's tools in the namespace mcp__<server>
	// and names each by its tool name, '-' becoming '_' in both: the model
	// sees mcp__json_tools + edit_in_place. enabled_tools and
	// disabled_tools use the tool names unchanged.
	NamingCodex Naming = "codex"
	// NamingGemini is mcp_<server>_<tool>, with mcp_<server>_* and mcp_*
	// as patterns (tools.allowed, tools.exclude).
	NamingGemini Naming = "gemini"
	// NamingOpenCode is <server>_<tool>, with * and ? as globs (the tools
	// and permission maps).
	NamingOpenCode Naming = "opencode"
)

// Known lists the surfaces names are resolved against, each with its
// member names; a nil list means the surface's tools are not known (an
// MCP server never listed).
type Known map[string][]string

// ToolName is the name harness naming n shows the model for
// tool:<surface>:<member>; member "*" gives its whole-server pattern.
func ToolName(n Naming, surface, member string) string {
	switch n {
	case NamingCodex:
		if member == "*" {
			return mcpPrefix + codexMangle(surface)
		}
		return mcpPrefix + codexMangle(surface) + "__" + codexMangle(member)
	case NamingGemini:
		return "mcp_" + surface + "_" + member
	case NamingOpenCode:
		return surface + "_" + member
	}
	if member == "*" {
		return mcpPrefix + surface
	}
	return mcpPrefix + surface + "__" + member
}

// codexMangle is Codex's spelling of a server or tool name for the model.
func codexMangle(s string) string { return strings.ReplaceAll(s, "-", "_") }

// opencodeBuiltins are OpenCode's own tools, so that "read" or
// "apply_patch" in its tools map is not taken for an MCP tool.
var opencodeBuiltins = map[string]bool{"bash": true, "edit": true, "write": true, "read": true, "grep": true,
	"glob": true, "list": true, "patch": true, "apply_patch": true, "multiedit": true, "todowrite": true,
	"todoread": true, "webfetch": true, "websearch": true, "codesearch": true, "skill": true, "task": true,
	"lsp": true, "question": true}

// NormalizeName maps one allowlist entry in naming n — a tool name or,
// where the harness has them, a pattern — to the capabilities it covers.
// A name whose server is unknown maps to that server as spelled, so
// parity shows it; a name two known surfaces could both produce is an
// *UnrecognisedError saying which.
func NormalizeName(n Naming, name string, known Known) ([]Capability, error) {
	one := func(c Capability, err error) ([]Capability, error) {
		if err != nil {
			return nil, err
		}
		return []Capability{c}, nil
	}
	switch n {
	case NamingCodex:
		return one(normalizeCodex(name, known))
	case NamingGemini:
		return one(normalizeGemini(name, known))
	case NamingOpenCode:
		return normalizeOpenCode(name, known)
	}
	return one(NormalizeEntry(name))
}

func unrecognisedName(name, format string, args ...any) error {
	return &UnrecognisedError{Entry: name, Reason: fmt.Sprintf(format, args...)}
}

// pick chooses want when it is known, else the one known name that equal
// says matches it; none returns want itself when it is a valid name.
func pick(name, what, want string, known []string, equal func(a, b string) bool) (string, error) {
	if slices.Contains(known, want) {
		return want, nil
	}
	var found []string
	for _, k := range known {
		if equal(k, want) {
			found = append(found, k)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return "", unrecognisedName(name, "%s %q could be any of %s; rename one so the harness names differ", what, want, strings.Join(found, ", "))
	case !ValidName(want):
		return "", unrecognisedName(name, "%q is not a %s (letters, digits, '_', '.', '-')", want, what)
	}
	return want, nil
}

func normalizeCodex(name string, known Known) (Capability, error) {
	rest, ok := strings.CutPrefix(name, mcpPrefix)
	if !ok {
		return NormalizeEntry(name)
	}
	ns, fn, hasFn := strings.Cut(rest, "__")
	mangled := func(a, b string) bool { return codexMangle(a) == codexMangle(b) }
	surface, err := pick(name, "server", ns, sortedSurfaces(known), mangled)
	if err != nil {
		return Capability{}, err
	}
	if !hasFn || fn == "*" {
		return Capability{Kind: KindSurface, Surface: surface}, nil
	}
	member, err := pick(name, "tool", fn, known[surface], mangled)
	if err != nil {
		return Capability{}, err
	}
	return Tool(surface, member), nil
}

func normalizeGemini(name string, known Known) (Capability, error) {
	if name == "*" || name == "mcp_*" {
		return Capability{Kind: KindAll}, nil
	}
	rest, ok := strings.CutPrefix(name, "mcp_")
	if !ok {
		switch {
		case name == "run_shell_command":
			return Capability{Kind: KindSurface, Surface: SurfaceShell}, nil
		case strings.HasPrefix(name, "run_shell_command("):
			cmd := strings.TrimSuffix(strings.TrimPrefix(name, "run_shell_command("), ")")
			if !ValidName(cmd) {
				return Capability{}, unrecognisedName(name, "run_shell_command(%s) does not name one command", cmd)
			}
			return Tool(SurfaceShell, cmd), nil
		case ValidName(name) && strings.ToLower(name) == name:
			return Tool(SurfaceHarness, name), nil
		}
		return Capability{}, unrecognisedName(name, "expected mcp_<server>_<tool>, mcp_<server>_*, or a Gemini CLI tool name such as read_file")
	}
	if server, ok := strings.CutSuffix(rest, "_*"); ok && ValidName(server) {
		return Capability{Kind: KindSurface, Surface: server}, nil
	}
	return splitPrefixed(name, rest, known, func(s string) (string, string, bool) {
		// Gemini CLI's own reading: the server ends at the first '_'.
		server, tool, ok := strings.Cut(s, "_")
		return server, tool, ok && server != ""
	})
}

// splitPrefixed reads <server>_<tool> against the known surfaces: the
// surface whose id and a known member spell it, else the longest known
// surface id it starts with, else fallback's split.
func splitPrefixed(name, rest string, known Known, fallback func(string) (string, string, bool)) (Capability, error) {
	var exact, prefixed []string
	for _, s := range sortedSurfaces(known) {
		member, ok := strings.CutPrefix(rest, s+"_")
		if !ok || member == "" {
			continue
		}
		prefixed = append(prefixed, s)
		for _, m := range known[s] {
			if m == member {
				exact = append(exact, s)
			}
		}
	}
	switch {
	case len(exact) > 1:
		return Capability{}, unrecognisedName(name, "it names a tool of each of %s; rename a surface so the harness names differ", strings.Join(exact, ", "))
	case len(exact) == 1:
		return Tool(exact[0], strings.TrimPrefix(rest, exact[0]+"_")), nil
	case len(prefixed) > 0:
		s := prefixed[0]
		for _, p := range prefixed {
			if len(p) > len(s) {
				s = p
			}
		}
		return Tool(s, strings.TrimPrefix(rest, s+"_")), nil
	}
	server, tool, ok := fallback(rest)
	if !ok || !ValidName(server) || !ValidName(tool) {
		return Capability{}, unrecognisedName(name, "expected <server>_<tool> with a server and a tool name")
	}
	return Tool(server, tool), nil
}

func normalizeOpenCode(name string, known Known) ([]Capability, error) {
	if name == "*" || name == "**" {
		return []Capability{{Kind: KindAll}}, nil
	}
	if !strings.ContainsAny(name, "*?") {
		switch {
		case name == "bash":
			return []Capability{{Kind: KindSurface, Surface: SurfaceShell}}, nil
		case opencodeBuiltins[name]:
			return []Capability{Tool(SurfaceHarness, name)}, nil
		}
		c, err := splitPrefixed(name, name, known, func(s string) (string, string, bool) {
			return strings.Cut(s, "_")
		})
		if err != nil {
			return nil, err
		}
		return []Capability{c}, nil
	}
	var out []Capability
	for _, s := range sortedSurfaces(known) {
		members := known[s]
		switch {
		case name == s+"_*" || members == nil && GlobMatch(name, s+"_\x01") && GlobMatch(name, s+"_\x01\x02-_.\x03"):
			out = append(out, Capability{Kind: KindSurface, Surface: s})
		default:
			for _, m := range members {
				if GlobMatch(name, s+"_"+m) {
					out = append(out, Tool(s, m))
				}
			}
		}
	}
	if server, ok := strings.CutSuffix(name, "_*"); ok && ValidName(server) {
		if _, isKnown := known[server]; !isKnown {
			out = append(out, Capability{Kind: KindSurface, Surface: server})
		}
	}
	return out, nil
}

// GlobMatch reports whether name matches an OpenCode pattern: '*' any run
// of characters but '/', '?' one such character, everything else itself.
func GlobMatch(pattern, name string) bool {
	p, s := []rune(pattern), []rune(name)
	star, mark := -1, 0
	i, j := 0, 0
	for j < len(s) {
		switch {
		case i < len(p) && p[i] == '*':
			star, mark = i, j
			i++
		case i < len(p) && (p[i] == s[j] || p[i] == '?') && s[j] != '/':
			i++
			j++
		case star >= 0 && s[mark] != '/':
			i, mark = star+1, mark+1
			j = mark
		default:
			return false
		}
	}
	for i < len(p) && p[i] == '*' {
		i++
	}
	return i == len(p)
}

// GeminiMatch reports whether name matches a Gemini CLI tools.allowed or
// tools.exclude entry: the name itself, mcp_<server>_* or mcp_*.
func GeminiMatch(pattern, name string) bool {
	switch {
	case pattern == name, pattern == "*":
		return true
	case pattern == "mcp_*":
		return strings.HasPrefix(name, "mcp_")
	case strings.HasPrefix(pattern, "mcp_") && strings.HasSuffix(pattern, "_*"):
		return strings.HasPrefix(name, strings.TrimSuffix(pattern, "*"))
	}
	return false
}

func sortedSurfaces(known Known) []string {
	out := make([]string, 0, len(known))
	for s := range known {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}
