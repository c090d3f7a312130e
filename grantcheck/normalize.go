package grantcheck

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// This file is the one mapping between harness allowlist entries (Claude
// Code's --allowed-tools and its kin) and capabilities, DESIGN.md §9. Parity,
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

var (
	// harnessToolRE is a bare harness tool name: Read, WebFetch, TodoWrite.
	harnessToolRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	// bashRE is Bash(<cmd>), Bash(<cmd>:*) or Bash(<cmd> *).
	bashRE = regexp.MustCompile(`^Bash\((.*)\)$`)
	// harnessNameRE is what a harness accepts as a whole tool name.
	harnessNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
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
	case harnessToolRE.MatchString(s):
		return Tool(SurfaceHarness, s), nil
	}
	if m := bashRE.FindStringSubmatch(s); m != nil {
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
	if name, _, ok := strings.Cut(s, "("); ok && harnessToolRE.MatchString(name) {
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
			if !harnessToolRE.MatchString(c.Member) {
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
		if !harnessNameRE.MatchString(e) {
			return fail(fmt.Sprintf("the harness name %q must match %s", e, harnessNameRE))
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
		if !harnessNameRE.MatchString(e) {
			return fail(fmt.Sprintf("the harness name %q must match %s", e, harnessNameRE))
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
