//go:build linux

package packs

import (
	"golang.org/x/sys/unix"

	"github.com/toolgate/toolgate/packs/supervisor"
)

// supervisorDefault is the Supervisor NewRunner sets: the running binary
// (package supervisor).
const supervisorDefault = supervisor.Default

// MaybeSupervise runs the supervisor or the memory-limit shim when the
// process was started as one of them, and exits; otherwise it returns at
// once. Importing packs already does this (package supervisor's init, before
// the heavy packages are initialised); calling it first thing in main says
// so where a reader looks.
func MaybeSupervise() { supervisor.MaybeRun() }

// limitDirect applies max_memory to a process already started (the runner
// without a supervisor): prlimit on the child.
func limitDirect(pid int, bytes int64) error {
	lim := unix.Rlimit{Cur: uint64(bytes), Max: uint64(bytes)}
	return unix.Prlimit(pid, unix.RLIMIT_AS, &lim, nil)
}
