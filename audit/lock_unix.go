//go:build unix

package audit

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes an exclusive flock(2) on f, blocking until it is granted.
// flock locks belong to the open file description, so two *Log values on one
// path exclude each other even inside one process, as do separate processes.
func lockFile(f *os.File) error {
	return flock(f, unix.LOCK_EX)
}

// unlockFile releases the lock taken by lockFile.
func unlockFile(f *os.File) error {
	return flock(f, unix.LOCK_UN)
}

func flock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	err = rc.Control(func(fd uintptr) {
		for {
			lerr = unix.Flock(int(fd), how)
			if !errors.Is(lerr, unix.EINTR) {
				return
			}
		}
	})
	if err != nil {
		return err
	}
	return lerr
}
