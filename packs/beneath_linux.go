//go:build linux

package packs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The walk beneath a root is os.Root's: every component is opened with
// O_NOFOLLOW from a descriptor of the one before, a symbolic link is
// followed only while it stays beneath the root (never an absolute one),
// and ".." is resolved within the root, whatever is renamed meanwhile.
// os.Root does not refuse the root's own path changing, /proc's magic
// links or special files ("Methods on Root do not prohibit traversal of
// ... /proc special files, or access to Unix device files"), nor can it
// open for reading a descriptor it opened as O_PATH. So four checks sit on
// top of it, each where it is made:
//   - openRoot: the root directory opened is the one at the resolved name,
//     not one a symbolic link put there since the grant was compiled;
//   - openPath: the file is opened as O_PATH, which has no effect whatever
//     it is (a FIFO does not block, a device is not opened); with O_PATH
//     os.Root returns a final symbolic link itself, so openPath follows it
//     by handing its text back to os.Root, refusing an absolute one — which
//     is what every /proc magic link reads as;
//   - openBound: only a regular file with a single link, or a directory,
//     is opened for the command;
//   - reopen: it is opened for reading through /proc/self/fd, which names
//     exactly the object that was checked.

// maxFinalLinks bounds the symbolic links openPath follows in the last
// component (os.Root follows at most 8 in the others).
const maxFinalLinks = 8

// openRoot opens the resolved directory root. The directory the kernel
// opened must be the one named root: a component swapped for a symbolic
// link after the grant was resolved would move the root elsewhere.
func openRoot(root string) (*os.Root, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	d, err := r.OpenFile(".", unix.O_PATH, 0)
	if err != nil {
		r.Close()
		return nil, err
	}
	at, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(d.Fd())))
	d.Close()
	switch {
	case err != nil:
		err = fmt.Errorf("checking it through /proc failed (is /proc mounted?): %w", err)
	case at != root:
		err = fmt.Errorf("the name now leads to %s (a symbolic link on the way?), not to the directory the grant allows", at)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// openPath opens rel beneath r as O_PATH, following symbolic links while
// they stay beneath r.
func openPath(r *os.Root, rel string) (*os.File, error) {
	for range maxFinalLinks + 1 {
		f, err := r.OpenFile(rel, unix.O_PATH, 0)
		if err != nil {
			return nil, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			f.Close()
			return nil, err
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			return f, nil
		}
		target, err := readlinkFD(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(target, "/") {
			return nil, unix.EXDEV // as the kernel's RESOLVE_BENEATH refuses it
		}
		// The text is relative to the link's directory, unresolved: os.Root
		// resolves the directory's links before any ".." in it.
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			target = rel[:i+1] + target
		}
		rel = target
	}
	return nil, unix.ELOOP
}

// readlinkFD reads the symbolic link an O_PATH descriptor holds.
func readlinkFD(f *os.File) (string, error) {
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(int(f.Fd()), "", buf)
		if err != nil {
			return "", err
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// openDirFD opens the directory rel beneath r as an O_PATH descriptor the
// caller owns, for the *at calls of a write_to.
func openDirFD(r *os.Root, rel string) (int, error) {
	f, err := openPath(r, rel)
	if err != nil {
		return -1, err
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return -1, unix.ENOTDIR
	}
	return unix.FcntlInt(f.Fd(), unix.F_DUPFD_CLOEXEC, 0)
}

// openBound opens b beneath its root for reading and returns the file the
// command gets: a regular file with a single link, or a directory (an
// O_DIRECTORY descriptor). FIFOs, devices and sockets are refused, since
// opening them can block or have effects; a hard-linked file is refused,
// since its other name may be outside the root.
func openBound(b BoundPath) (*os.File, error) {
	rel, err := relBeneath(b.Root, b.Path)
	if err != nil {
		return nil, err
	}
	r, err := openRoot(b.Root)
	if err != nil {
		return nil, fmt.Errorf("cannot open the allowed directory %s: %w", b.Root, err)
	}
	defer r.Close()
	pf, err := openPath(r, rel)
	if err != nil {
		return nil, beneathError(err)
	}
	defer pf.Close()
	pfd := int(pf.Fd())
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return nil, err
	}
	flags := unix.O_RDONLY | unix.O_NOCTTY | unix.O_CLOEXEC
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		flags |= unix.O_DIRECTORY
	case unix.S_IFREG:
		if st.Nlink > 1 {
			return nil, fmt.Errorf("is a hard link (%d names for one file), so it may also be a file outside the allowed directory; copy the file instead of linking it", st.Nlink)
		}
	default:
		return nil, fmt.Errorf("is not a regular file or a directory (%s); only those are opened for a command", fileType(st.Mode))
	}
	fd, err := reopen(pfd, flags, &st)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), b.Path), nil
}

// reopen turns an O_PATH descriptor into a readable one for the same
// object: through /proc/self/fd, which names exactly that object.
func reopen(pfd, flags int, was *unix.Stat_t) (int, error) {
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), flags, 0)
	if err != nil {
		return -1, fmt.Errorf("reopening it for reading through /proc failed (is /proc mounted?): %w", err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Dev != was.Dev || st.Ino != was.Ino {
		unix.Close(fd)
		return -1, errors.New("changed while it was being opened")
	}
	return fd, nil
}

// beneathError words a failed open beneath a root. os.Root refuses a path
// that leads outside the root with an error of its own, not an errno.
func beneathError(err error) error {
	var errno syscall.Errno
	switch {
	case errors.Is(err, unix.ENOENT):
		return errNotExist
	case errors.Is(err, unix.ENOTDIR):
		return errors.New("has a component that is not a directory")
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP), !errors.As(err, &errno):
		return fmt.Errorf("%w: a symbolic link on the way leads outside it, or changed while the path was being opened", errNotBeneath)
	}
	return err
}

func fileType(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFCHR:
		return "a character device"
	case unix.S_IFBLK:
		return "a block device"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFLNK:
		return "a symbolic link"
	}
	return "of unknown type"
}
