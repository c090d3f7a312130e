//go:build linux

package contain

import (
	"os"
	"syscall"
)

// ChildPipe is a pipe whose write end goes to a child: the read end is
// non-blocking and served by the runtime's poller, the write end stays
// blocking and outside the poller, as a child is handed it. Both are
// close-on-exec. os.Pipe would register both ends with the poller, and
// starting the child would set its end back to blocking: four system
// calls per pipe a call does not need.
func ChildPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, os.NewSyscallError("pipe2", err)
	}
	if err := syscall.SetNonblock(p[0], true); err != nil {
		syscall.Close(p[0])
		syscall.Close(p[1])
		return nil, nil, os.NewSyscallError("fcntl", err)
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
