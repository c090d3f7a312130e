package grantcheck

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/toolgate/toolgate/workspace"
)

// maxLinks bounds the symlinks followed while resolving one path, as the
// kernel does (ELOOP).
const maxLinks = 40

// ResolvePath turns an absolute path into the path the operating system
// would reach: component by component, following every symlink that exists,
// applying ".." to the resolved directory (so link/.. is the parent of the
// link's target, not of the link). Components that do not exist yet are
// taken literally — a command may create them, and a directory it creates
// is not a symlink. This is "clean, then resolve the longest existing
// prefix" without the trap of cleaning ".." lexically before resolving.
func ResolvePath(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%q is not absolute", path)
	}
	dest := string(filepath.Separator)
	rest := path
	links := 0
	for rest != "" {
		var comp string
		comp, rest, _ = strings.Cut(rest, string(filepath.Separator))
		switch comp {
		case "", ".":
			continue
		case "..":
			dest = filepath.Dir(dest)
			continue
		}
		next := filepath.Join(dest, comp)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			dest = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			dest = next
			continue
		}
		links++
		if links > maxLinks {
			return "", errTooManyLinks
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			dest = string(filepath.Separator)
		}
		if rest == "" {
			rest = target
		} else {
			rest = target + string(filepath.Separator) + rest
		}
	}
	return dest, nil
}

// within reports whether path is root or below it. Both are resolved, so a
// plain prefix test on a separator boundary is exact: /data-evil is not
// within /data.
func within(path, root string) bool {
	if root == string(filepath.Separator) {
		return true
	}
	return path == root || (strings.HasPrefix(path, root) && path[len(root)] == filepath.Separator)
}

// PathRoots returns, for the grant that Decide matches when agentID calls
// surfaceID:memberName, each parameter bound by path_within and its root,
// resolved (absolute, no symlinks). It is what the pack runner needs to
// open those arguments itself beneath their roots (docs/packs.md), so that the
// command receives an open file, not a name checked earlier. Nil when
// nothing is bound or nothing is granted. Call it on the same Policy that
// decided the call: after a reload another grant may match.
func (p *Policy) PathRoots(agentID, surfaceID, memberName string) map[string]string {
	ag := p.agents[agentID]
	if ag == nil {
		return nil
	}
	_, g, _ := p.lookup(ag, surfaceID, memberName)
	if g == nil {
		return nil
	}
	var roots map[string]string
	for _, k := range g.constraints {
		if k.within == "" {
			continue
		}
		if roots == nil {
			roots = map[string]string{}
		}
		roots[k.param] = k.within
	}
	return roots
}

// checkBoundLayout reports each element of the granted pack command where a
// parameter the grant binds with path_within cannot stand (docs/packs.md): the
// command receives such a value as a descriptor path (/dev/fd/N), and text
// composed after it would walk out of the root. The runner refuses the
// same layouts on every call (packs.Runner.PrepareBound); this reports
// them at load, where they are known. It reports at the element, or, for a
// bundled pack (whose file the operator does not edit), at the constraint.
func (c *compiler) checkBoundLayout(where string, s *surface, member string, g *grant) bool {
	if s.kind != KindPackSurface || c.dmg.members[toolKey{s.id, member}] {
		return true
	}
	at := map[string]*constraint{}
	for _, k := range g.constraints {
		if k.within != "" {
			at[k.param] = k
		}
	}
	if len(at) == 0 {
		return true
	}
	var cmd *workspace.Command
	for _, cm := range s.pack.Commands {
		if cm.ID == member {
			cmd = cm
		}
	}
	if cmd == nil {
		return true
	}
	bad := workspace.MisplacedBounds(cmd, "bound by path_within", func(p string) bool { return at[p] != nil })
	for _, m := range bad {
		k := at[m.Param]
		pos := m.Pos
		if s.pack.Bundled {
			pos = k.pos
		}
		c.errorf(pos, "command %s:%s: %v (%s binds %s with path_within at %s)", s.id, member, m, where, m.Param, k.pos)
	}
	return len(bad) == 0
}
