//go:build !linux

package packs

import (
	"errors"
	"os"
)

// errBindUnsupported refuses path_within bindings where the gateway cannot
// open a path beneath a root without a race (O_PATH and /proc: Linux).
var errBindUnsupported = errors.New("cannot be opened beneath its root on this operating system (path_within binding needs Linux); run the gateway on Linux, or drop path_within from the grant")

func openBound(BoundPath) (*os.File, error) { return nil, errBindUnsupported }

type dirHandle struct{}

func (*dirHandle) rename() error { return errBindUnsupported }
func (*dirHandle) unlinkTemp()   {}
func (*dirHandle) close()        {}

func openOutputBeneath(target, root string) (*outputFile, error) {
	return nil, errors.New("write_to " + target + " " + errBindUnsupported.Error())
}

// createdFile is never made where binding is unsupported.
type createdFile struct{ value string }

func (*createdFile) remove() bool { return false }
func (*createdFile) close()       {}

func openOrCreateBound(BoundPath) (*os.File, *createdFile, error) {
	return nil, nil, errBindUnsupported
}

func probeCreate(BoundPath) error { return errBindUnsupported }
