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
}

// openOutputFile creates the temporary file for target. A symlinked target
// is followed, so the file it points at is replaced and the link is kept.
func openOutputFile(target string) (*outputFile, error) {
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
		err = os.Rename(o.tmp.Name(), o.target)
	}
	if err != nil {
		_ = os.Remove(o.tmp.Name())
		return fmt.Errorf("replacing %s: %w", o.target, err)
	}
	return nil
}

// discard removes the temporary file; the target is never touched.
func (o *outputFile) discard() {
	_ = o.tmp.Close()
	_ = os.Remove(o.tmp.Name())
}
