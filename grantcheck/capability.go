// Package grantcheck is toolgate's one decision point: the capability
// grammar of grants, the mapping between harness allowlist entries and
// capabilities, and the compiled per-agent policy whose Decide runs the call
// pipeline of docs/grants.md (identity, grant, scopes, input schema,
// param_constraints, tier) for pack commands and MCP tools alike.
package grantcheck

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Kind is the form a capability was written in; it decides how much a grant
// covers (one tool, a surface's read commands, a server's every tool).
type Kind int

// The capability forms of docs/grants.md.
const (
	// KindTool is tool:<surface>:<member>: one tool, read or write.
	KindTool Kind = iota + 1
	// KindSurface is tool:<surface>:*: a pack's read commands or a
	// server's listed tools, depending on the surface.
	KindSurface
	// KindPack is pack:<id>: every read command of the pack, now and later.
	KindPack
	// KindServer is server:<id>: every tool the server lists.
	KindServer
	// KindAlias is <pack>-<command>, the skill-style alias of a tool:
	// capability; which split is meant is only known against the packs.
	KindAlias
	// KindAll is tool:* or *: expressible so it can be reported, refused
	// wherever a grant is compiled.
	KindAll
)

// String names the kind, for messages.
func (k Kind) String() string {
	switch k {
	case KindTool:
		return "tool"
	case KindSurface:
		return "surface"
	case KindPack:
		return "pack"
	case KindServer:
		return "server"
	case KindAlias:
		return "alias"
	case KindAll:
		return "all"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Capability is one parsed capability. Surface is the surface id (KindTool,
// KindSurface, KindPack, KindServer); Member the tool name (KindTool); Alias
// the whole alias text (KindAlias).
type Capability struct {
	Kind    Kind
	Surface string
	Member  string
	Alias   string
}

// The reserved surfaces of harness-provided tools (Read, Write, …) and of
// shell commands (Bash(git:*)), which toolgate names but does not serve.
const (
	SurfaceHarness = "harness"
	SurfaceShell   = "shell"
)

// nameRE is what surface ids and member names must match.
// (compiled when first used, not by every process at start).
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

// ValidName reports whether s may be a surface id or member name.
func ValidName(s string) bool { return nameRE().MatchString(s) }

// Tool returns the capability tool:<surface>:<member>.
func Tool(surface, member string) Capability {
	return Capability{Kind: KindTool, Surface: surface, Member: member}
}

// String prints the canonical form; Parse(c.String()) returns c.
func (c Capability) String() string {
	switch c.Kind {
	case KindTool:
		return "tool:" + c.Surface + ":" + c.Member
	case KindSurface:
		return "tool:" + c.Surface + ":*"
	case KindPack:
		return "pack:" + c.Surface
	case KindServer:
		return "server:" + c.Surface
	case KindAlias:
		return c.Alias
	case KindAll:
		return "tool:*"
	}
	return "<invalid capability>"
}

// Parse reads a capability in any form of docs/grants.md. It checks syntax
// only; whether the surface exists, and whether the form is allowed in a
// grant (tool:* is not), is decided by Compile.
func Parse(s string) (Capability, error) {
	switch {
	case s == "*" || s == "tool:*":
		return Capability{Kind: KindAll}, nil
	case s == "":
		return Capability{}, fmt.Errorf("empty capability; write tool:<surface>:<member>, pack:<id> or server:<id>")
	}
	if rest, ok := strings.CutPrefix(s, "tool:"); ok {
		surface, member, ok := strings.Cut(rest, ":")
		if !ok {
			return Capability{}, fmt.Errorf("capability %q has no member; write tool:<surface>:<member> or tool:<surface>:*", s)
		}
		if err := checkName(s, "surface", surface); err != nil {
			return Capability{}, err
		}
		if member == "*" {
			return Capability{Kind: KindSurface, Surface: surface}, nil
		}
		if err := checkName(s, "member", member); err != nil {
			return Capability{}, err
		}
		return Tool(surface, member), nil
	}
	for _, p := range []struct {
		prefix string
		kind   Kind
	}{{"pack:", KindPack}, {"server:", KindServer}} {
		if id, ok := strings.CutPrefix(s, p.prefix); ok {
			if err := checkName(s, p.kind.String()+" id", id); err != nil {
				return Capability{}, err
			}
			return Capability{Kind: p.kind, Surface: id}, nil
		}
	}
	if ValidName(s) && strings.Contains(strings.Trim(s, "-"), "-") {
		return Capability{Kind: KindAlias, Alias: s}, nil
	}
	return Capability{}, fmt.Errorf("capability %q is not recognised; write tool:<surface>:<member>, tool:<surface>:*, pack:<id>, server:<id> or <pack>-<command>", s)
}

func checkName(capability, what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("capability %q: the %s is empty", capability, what)
	case name == "*":
		return fmt.Errorf("capability %q: a wildcard %s spans every surface and is refused; name the surface", capability, what)
	case !ValidName(name):
		return fmt.Errorf("capability %q: the %s %q may only use letters, digits, '_', '.' and '-'", capability, what, name)
	}
	return nil
}
