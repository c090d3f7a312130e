package packs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// newFileMode is the mode of a write_to target that did not exist before.
const newFileMode fs.FileMode = 0o644

// outputFile is the temporary file a write_to command's stdout streams
// into. It lives next to the target so the final rename is atomic, and it
// replaces the target only on commit; discard leaves the target untouched.
type outputFile struct {
	target string
	mode   fs.FileMode
	tmp    *os.File
	// beneath is set when the target is bound by path_within: the
	// temporary file was created, and is renamed, relative to a directory
	// descriptor opened beneath the grant's root, so no name is resolved
	// again after the check.
	beneath *dirHandle
}

// openOutputFile creates the temporary file for target. A symlinked target
// is followed, so the file it points at is replaced and the link is kept.
// With a root (path_within), target must resolve beneath it and everything
// happens through a descriptor of its directory.
func openOutputFile(target, root string) (*outputFile, error) {
	if root != "" {
		return openOutputBeneath(target, root)
	}
	mode := newFileMode
	resolved, err := filepath.EvalSymlinks(target)
	switch {
	case err == nil:
		fi, err := os.Stat(resolved)
		if err != nil {
			return nil, fmt.Errorf("write_to %s: %w", target, err)
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("write_to %s is not a regular file; name a file to replace", target)
		}
		mode = fi.Mode().Perm()
	case errors.Is(err, fs.ErrNotExist):
		resolved = target
	default:
		return nil, fmt.Errorf("write_to %s: %w", target, err)
	}
	dir, base := filepath.Split(resolved)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".toolgate-*")
	if err != nil {
		return nil, fmt.Errorf("write_to %s: cannot create a temporary file beside it (the directory must exist and be writable): %w", target, err)
	}
	return &outputFile{target: resolved, mode: mode, tmp: tmp}, nil
}

// commit makes the written content durable and renames it over the target,
// with the target's original mode.
func (o *outputFile) commit() error {
	err := o.tmp.Chmod(o.mode)
	if err == nil {
		err = o.tmp.Sync()
	}
	if cerr := o.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		if o.beneath != nil {
			err = o.beneath.rename()
		} else {
			err = os.Rename(o.tmp.Name(), o.target)
		}
	}
	if err != nil {
		o.remove()
		return fmt.Errorf("replacing %s: %w", o.target, err)
	}
	o.release()
	return nil
}

// discard removes the temporary file; the target is never touched.
func (o *outputFile) discard() {
	_ = o.tmp.Close()
	o.remove()
}

func (o *outputFile) remove() {
	if o.beneath != nil {
		o.beneath.unlinkTemp()
		o.release()
		return
	}
	_ = os.Remove(o.tmp.Name())
}

func (o *outputFile) release() {
	if o.beneath != nil {
		o.beneath.close()
	}
}
