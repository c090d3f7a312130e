//go:build linux

package packs

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// dirHandle is the directory of a bound write_to target, held open as an
// O_PATH descriptor opened beneath the grant's root.
type dirHandle struct {
	fd            int
	tmpName, base string
}

func (d *dirHandle) rename() error { return unix.Renameat(d.fd, d.tmpName, d.fd, d.base) }
func (d *dirHandle) unlinkTemp()   { _ = unix.Unlinkat(d.fd, d.tmpName, 0) }
func (d *dirHandle) close() {
	if d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}

// openOutputBeneath creates the temporary file of a write_to target bound
// by path_within: target's directory is opened beneath root, the temporary
// file created in it with O_EXCL|O_NOFOLLOW, and commit renames it over the
// target within that same directory (renameat), whatever happens to the
// names around it meanwhile.
func openOutputBeneath(target, root string) (*outputFile, error) {
	rel, err := relBeneath(root, target)
	if err != nil {
		return nil, fmt.Errorf("write_to %s %w", target, err)
	}
	if rel == "." {
		return nil, fmt.Errorf("write_to %s names the allowed directory itself; name a file in it", target)
	}
	parent, base := filepath.Split(rel)
	if parent == "" {
		parent = "."
	}
	dfd, err := openDirBeneath(root, filepath.Clean(parent))
	if err != nil {
		return nil, fmt.Errorf("write_to %s: %w", target, err)
	}
	mode := newFileMode
	var st unix.Stat_t
	switch err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case errors.Is(err, unix.ENOENT):
	case err != nil:
		unix.Close(dfd)
		return nil, fmt.Errorf("write_to %s: %w", target, err)
	case st.Mode&unix.S_IFMT == unix.S_IFREG:
		mode = fs.FileMode(st.Mode & 0o777)
	default:
		unix.Close(dfd)
		return nil, fmt.Errorf("write_to %s is %s, not a regular file; name a file to replace", target, fileType(st.Mode))
	}
	d := &dirHandle{fd: dfd, base: base}
	for range 16 {
		var rnd [6]byte
		_, _ = rand.Read(rnd[:])
		d.tmpName = "." + base + ".toolgate-" + hex.EncodeToString(rnd[:])
		fd, err := unix.Openat(dfd, d.tmpName, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if errors.Is(err, unix.EEXIST) {
			continue
		}
		if err != nil {
			d.close()
			return nil, fmt.Errorf("write_to %s: cannot create a temporary file beside it (the directory must be writable): %w", target, err)
		}
		tmp := os.NewFile(uintptr(fd), filepath.Join(root, filepath.Dir(rel), d.tmpName))
		return &outputFile{target: filepath.Join(root, rel), mode: mode, tmp: tmp, beneath: d}, nil
	}
	d.close()
	return nil, fmt.Errorf("write_to %s: could not pick a temporary file name", target)
}
