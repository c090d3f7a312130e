//go:build linux

package packs

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// opener opens paths beneath a root. The zero value uses openat2 with
// RESOLVE_BENEATH where the kernel has it (Linux 5.6+) and falls back to a
// component-by-component O_NOFOLLOW walk where it does not (older kernels,
// seccomp filters that refuse the call); walk forces the fallback, so
// tests cover both.
type opener struct {
	walk bool
}

// errNoOpenat2 says the kernel (or a seccomp filter) refuses openat2.
var errNoOpenat2 = errors.New("openat2 unavailable")

// openat2Beneath is openat2 retried on EINTR/EAGAIN, or errNoOpenat2.
func openat2Beneath(dirfd int, rel string, flags int, resolve uint64) (int, error) {
	how := &unix.OpenHow{Flags: uint64(flags | unix.O_CLOEXEC), Resolve: resolve}
	for {
		fd, err := unix.Openat2(dirfd, rel, how)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.E2BIG):
			// ENOSYS: kernel before 5.6; EPERM: a seccomp profile that
			// does not know the call.
			return -1, errNoOpenat2
		}
		return -1, err
	}
}

// openRoot opens the root directory itself as an O_PATH descriptor. The
// root is resolved, so no component of it may be a symlink now.
func (o opener) openRoot(root string) (int, error) {
	if !o.walk {
		fd, err := openat2Beneath(unix.AT_FDCWD, root, unix.O_PATH|unix.O_DIRECTORY, unix.RESOLVE_NO_SYMLINKS|unix.RESOLVE_NO_MAGICLINKS)
		if !errors.Is(err, errNoOpenat2) {
			return fd, err
		}
	}
	rootfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	return walkBeneath(rootfd, strings.TrimPrefix(root, "/"), true)
}

// openPath opens rel beneath dirfd as O_PATH (no side effects, whatever it
// is). With openat2, symlinks inside the root are followed as long as they
// stay inside; with the walk, any symlink is refused.
func (o opener) openPath(dirfd int, rel string, wantDir bool) (int, error) {
	if !o.walk {
		flags := unix.O_PATH
		if wantDir {
			flags |= unix.O_DIRECTORY
		}
		fd, err := openat2Beneath(dirfd, rel, flags, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
		if !errors.Is(err, errNoOpenat2) {
			return fd, err
		}
	}
	d, err := unix.Dup(dirfd)
	if err != nil {
		return -1, err
	}
	unix.CloseOnExec(d)
	return walkBeneath(d, rel, wantDir)
}

// walkBeneath opens rel below dirfd one component at a time with O_NOFOLLOW,
// refusing symlinks and "..": the fallback when openat2 is missing. It
// takes ownership of dirfd.
func walkBeneath(dirfd int, rel string, wantDir bool) (int, error) {
	cur := dirfd
	comps := strings.Split(rel, "/")
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			unix.Close(cur)
			return -1, unix.EXDEV
		}
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(cur)
		if err != nil {
			return -1, err
		}
		var st unix.Stat_t
		if err := unix.Fstat(next, &st); err != nil {
			unix.Close(next)
			return -1, err
		}
		last := i == len(comps)-1
		switch {
		case st.Mode&unix.S_IFMT == unix.S_IFLNK:
			unix.Close(next)
			return -1, unix.ELOOP
		case !last && st.Mode&unix.S_IFMT != unix.S_IFDIR, last && wantDir && st.Mode&unix.S_IFMT != unix.S_IFDIR:
			unix.Close(next)
			return -1, unix.ENOTDIR
		}
		cur = next
	}
	return cur, nil
}

// openBound opens b beneath its root for reading and returns the file the
// command gets: a regular file with a single link, or a directory (an
// O_DIRECTORY descriptor). FIFOs, devices and sockets are refused, since
// opening them can block or have effects; a hard-linked file is refused,
// since its other name may be outside the root.
func (o opener) openBound(b BoundPath) (*os.File, error) {
	rel, err := relBeneath(b.Root, b.Path)
	if err != nil {
		return nil, err
	}
	rootfd, err := o.openRoot(b.Root)
	if err != nil {
		return nil, fmt.Errorf("cannot open the allowed directory %s: %w", b.Root, err)
	}
	defer unix.Close(rootfd)
	pfd, err := o.openPath(rootfd, rel, false)
	if err != nil {
		return nil, beneathError(err)
	}
	defer unix.Close(pfd)
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

func beneathError(err error) error {
	switch {
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return fmt.Errorf("%w: a symbolic link on the way leads outside it, or changed while the path was being opened", errNotBeneath)
	case errors.Is(err, unix.ENOENT):
		return errors.New("does not exist")
	case errors.Is(err, unix.ENOTDIR):
		return errors.New("has a component that is not a directory")
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
