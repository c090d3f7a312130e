package packs

import (
	"errors"
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// Opening a path_within argument (docs/packs.md). Trust boundary: the path
// comes from the agent; the root comes from the operator's grant, already
// resolved. What the command receives is a file descriptor the gateway
// opened beneath the root, never a name the command resolves itself, so a
// symlink swapped in after the decision changes nothing.

// errNotBeneath is the refusal for a path that leads outside its root.
var errNotBeneath = errors.New("is not within the directory the grant allows")

// errNotExist is a bound path that does not exist (or a directory on the
// way to it).
var errNotExist = errors.New("does not exist")

// relBeneath resolves path and returns it relative to root ("." for root
// itself), or errNotBeneath. root must be absolute and resolved.
func relBeneath(root, path string) (string, error) {
	// The same walk the grant checker does, so both agree on what a name
	// means; os.Root then holds the open to the root (beneath_linux.go).
	p, err := grantcheck.ResolvePath(path)
	if err != nil {
		return "", err
	}
	switch {
	case p == root:
		return ".", nil
	case root == "/":
		return p[1:], nil
	case strings.HasPrefix(p, root) && p[len(root)] == '/':
		return p[len(root)+1:], nil
	}
	return "", errNotBeneath
}

// BoundPath is one path_within argument of a call, as the runner binds it:
// opened beneath Root and handed to the command as /dev/fd/FD.
type BoundPath struct {
	// Param is the parameter; Value the argument as the caller gave it
	// (one item of it, for a list).
	Param, Value string
	// Path is Value made absolute against the command's directory.
	Path string
	// Root is the resolved directory the grant binds the parameter to.
	Root string
	// FD is the descriptor number the command sees.
	FD int
	// Create is set for a parameter the command lists under creates:
	// when Value does not exist, the gateway creates it (beneath_create).
	Create bool
}

// createdFiles are the files the gateway created for one run.
type createdFiles []*createdFile

// settle closes the handles of the created files and, when the run
// failed, removes each file that its name still names; it returns the
// names (as the caller gave them) of the files removed. A file the run
// created and then succeeded with stays, written or not.
func (cs createdFiles) settle(failed bool) []string {
	var removed []string
	for _, c := range cs {
		if failed && c.remove() {
			removed = append(removed, c.value)
		}
		c.close()
	}
	return removed
}

// firstBoundFD is the descriptor of the first bound path: 0-2 are the
// standard streams.
const firstBoundFD = 3

// devFD is how a command names bound descriptor n.
func devFD(n int) string { return fmt.Sprintf("/dev/fd/%d", n) }
