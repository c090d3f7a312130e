//go:build windows

package audit

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockRange is the byte range the lock covers: one byte far beyond any real
// log size. Windows locks are mandatory, so locking the data itself would
// stop readers (audit tail, verify); a range nobody reads or writes does not.
func lockRange() *windows.Overlapped {
	return &windows.Overlapped{Offset: 0, OffsetHigh: 0x7fffffff}
}

// lockFile takes an exclusive LockFileEx lock on f, blocking until granted;
// like flock, it excludes other handles in this process and other processes.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, lockRange())
}

// unlockFile releases the lock taken by lockFile.
func unlockFile(f *os.File) error {
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, lockRange())
}
