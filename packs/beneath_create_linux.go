//go:build linux

package packs

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Creating the missing file of a bound parameter listed under creates:
// (`sort -o {out}`). Trust boundary: the name comes from the agent. Its
// directory is opened beneath the root as any bound path is (os.Root, no
// link followed out of it), and the file is created in that directory
// descriptor under the name as written, with O_CREAT|O_EXCL|O_NOFOLLOW: a
// name that exists by then — a symbolic link swapped in, a file someone
// else created — is never opened through, whatever it points at. This is
// write_to's mechanism (writeto_linux.go): the same directory open, the
// same flags, the same mode for a new file. The gateway never truncates:
// an existing file is opened as any bound file, and what the command does
// with it is the command's doing.

// errRaced is a name that exists although openBound found none a moment
// before: it is opened as an existing file instead.
var errRaced = errors.New("appeared while it was being created")

// createdFile is a file the gateway created for one run, with the
// directory it was created in held open, so that removing it on failure
// looks the name up there and nowhere else.
type createdFile struct {
	dir  int
	base string
	// file is a descriptor of the file itself, held until settle so that
	// its inode cannot be freed and reused by another file meanwhile:
	// the same device and inode at base then mean the same file.
	file     int
	dev, ino uint64
	// value is the name as the caller gave it, for messages.
	value string
}

// remove unlinks the file if its name still names the file the gateway
// created (same device and inode); it reports whether it did.
func (c *createdFile) remove() bool {
	var st unix.Stat_t
	if c.dir < 0 || unix.Fstatat(c.dir, c.base, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false
	}
	if st.Dev != c.dev || st.Ino != c.ino {
		return false
	}
	return unix.Unlinkat(c.dir, c.base, 0) == nil
}

func (c *createdFile) close() {
	for _, fd := range []*int{&c.dir, &c.file} {
		if *fd >= 0 {
			unix.Close(*fd)
			*fd = -1
		}
	}
}

// openOrCreateBound opens b beneath its root (openBound) or, when b is to
// be created and does not exist, creates it. A name that appears between
// the two is opened like any existing file, with every check.
func openOrCreateBound(b BoundPath) (*os.File, *createdFile, error) {
	for range 2 {
		f, err := openBound(b)
		if err == nil || !b.Create || !errors.Is(err, errNotExist) {
			return f, nil, err
		}
		f, c, err := createBound(b)
		if !errors.Is(err, errRaced) {
			return f, c, err
		}
	}
	return nil, nil, errors.New("changed while it was being opened (it appeared and disappeared again); call again")
}

// createBound creates the missing file b names in its directory opened
// beneath the root and returns it opened for reading, as every bound file
// is (the command writes it by opening /dev/fd/N, as `sort -o` does), with
// the handle that removes it again if the run fails.
func createBound(b BoundPath) (*os.File, *createdFile, error) {
	dfd, base, err := parentBeneath(b)
	if err != nil {
		return nil, nil, err
	}
	fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, unix.EEXIST) {
			// Something is there: a link is refused, anything else (or
			// nothing again) is looked at afresh.
			if err = freeName(dfd, base); err == nil {
				err = errRaced
			}
		} else {
			err = fmt.Errorf("cannot be created (the directory must be writable): %w", err)
		}
		unix.Close(dfd)
		return nil, nil, err
	}
	c := &createdFile{dir: dfd, base: base, file: -1, value: b.Value}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		_ = unix.Unlinkat(dfd, base, 0)
		c.close()
		return nil, nil, fmt.Errorf("was created but could not be looked at: %w", err)
	}
	c.dev, c.ino = st.Dev, st.Ino
	c.file, err = unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err == nil {
		// Explicitly, as write_to sets a new file's mode: not the umask's.
		err = unix.Fchmod(fd, uint32(newFileMode))
	}
	if err != nil {
		unix.Close(fd)
		c.remove()
		c.close()
		return nil, nil, fmt.Errorf("was created but could not be set up: %w", err)
	}
	return os.NewFile(uintptr(fd), b.Path), c, nil
}

// probeCreate checks, before a call is decided on or held for approval,
// that the missing file b names can be created when the call runs: its
// directory exists beneath the root, and the name is not a symbolic link.
func probeCreate(b BoundPath) error {
	dfd, base, err := parentBeneath(b)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	if err := freeName(dfd, base); err != nil && !errors.Is(err, errRaced) {
		return err
	}
	return nil
}

// parentBeneath opens, beneath b.Root, the directory the file b names
// lives in, and returns it with the file's name. The name is the last
// component as written, never resolved: a symbolic link there is not
// followed.
func parentBeneath(b BoundPath) (int, string, error) {
	i := strings.LastIndexByte(b.Path, '/')
	dir, base := b.Path[:i], b.Path[i+1:]
	if dir == "" {
		dir = "/"
	}
	if base == "" || base == "." || base == ".." {
		return -1, "", errors.New("does not exist and does not name a file to create (it ends in /, . or ..); name the file itself")
	}
	rel, err := relBeneath(b.Root, dir)
	if err != nil {
		return -1, "", err
	}
	dfd, err := openDirBeneath(b.Root, rel)
	if errors.Is(err, errNotExist) {
		return -1, "", errors.New("does not exist, and neither does its directory; create the directory first (the gateway creates only a missing file, in a directory that exists)")
	}
	if err != nil {
		return -1, "", err
	}
	return dfd, base, nil
}

// freeName says what is at base in dfd: nil for nothing, errRaced for a
// file, a refusal for a symbolic link (one whose target is missing, since
// openBound found nothing there).
func freeName(dfd int, base string) error {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return nil
	case err != nil:
		return err
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return errors.New("is a symbolic link to a file that does not exist; the gateway creates a missing file under its own name, never through a link: name the file itself")
	}
	return errRaced
}

// openDirBeneath opens the directory rel beneath root as an O_PATH
// descriptor the caller owns: the directory a new file is created in.
func openDirBeneath(root, rel string) (int, error) {
	r, err := openRoot(root)
	if err != nil {
		return -1, fmt.Errorf("cannot open the allowed directory %s: %w", root, err)
	}
	defer r.Close()
	fd, err := openDirFD(r, rel)
	if err != nil {
		return -1, fmt.Errorf("its directory %w", beneathError(err))
	}
	return fd, nil
}
