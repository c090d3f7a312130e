// Package supervisor holds the programs toolgate runs as its own binary
// re-executed under a name no person types (argv[0]):
//
//   - WatchArg0, the watcher: one per gateway process (package contain
//     starts it), it holds the read end of a pipe whose write end only the
//     gateway has. When that pipe reaches end of file — the gateway
//     closed it, or died, even by SIGKILL — it kills whatever the gateway
//     still contained: its cgroup subtree, or the sessions it was told of.
//   - HelperArg0, the portable containment helper: the same protocol as
//     package contain's native helper (start the command with its
//     address-space bound, wait for it, report its wait status on a pipe),
//     for machines the native helper cannot run on.
//   - LimitArg0, the memory-limit shim the portable helper starts the
//     command through: it sets RLIMIT_AS on itself and executes the
//     program in its place.
//
// A re-executed toolgate costs some 30 ms of CPU before its first
// instruction of ours (the runtime and package initialisers of a large
// binary), which is why no pack call pays for one where the native helper
// runs: the watcher is started once per gateway, the portable helper and
// the shim only where the native helper cannot run.
//
// The package's init runs the program when the process was started as one
// of them, and exits; it imports only packages that initialise early.
package supervisor

import (
	"os"
	"strconv"
)

// The names (argv[0]) under which the toolgate binary runs as one of this
// package's programs.
const (
	HelperArg0 = "toolgate-supervise"
	LimitArg0  = "toolgate-limit-exec"
	WatchArg0  = "toolgate-watch"
)

// SelfExe names the running binary, as a child being started sees it
// (even if the file was replaced on disk since).
const SelfExe = "/proc/self/exe"

// Report records: what a helper writes on its report descriptor, 8 bytes
// each, a 32-bit tag then a 32-bit value, little-endian. The native helper
// of package contain writes the same.
const (
	// RecordExecFailed: the program could not be executed; the value is
	// the errno (written by the helper's child, which then exits 127).
	RecordExecFailed = 1
	// RecordStatus: the command's wait status (the helper then exits 0).
	RecordStatus = 2
	// RecordLimitFailed: RLIMIT_AS could not be set; the value is the
	// errno (the command never ran).
	RecordLimitFailed = 3
	// RecordWaitFailed: waiting for the command failed; errno.
	RecordWaitFailed = 4
	// RecordSize is the size of one record.
	RecordSize = 8
)

// HelperArgs is a helper's command line after argv[0]:
//
//	REPORT_FD AS_BYTES PROGRAM ARGV0 [ARGS...]
//
// REPORT_FD is the descriptor the report records go to (the helper marks
// it close-on-exec, so the command never holds it); AS_BYTES the
// command's RLIMIT_AS, soft and hard (0: none). Every other descriptor
// below REPORT_FD is passed on to the command at the same number.
func HelperArgs(reportFD int, as int64, program string, argv []string) []string {
	out := make([]string, 0, 3+len(argv))
	out = append(out, strconv.Itoa(reportFD), strconv.FormatInt(as, 10), program)
	return append(out, argv...)
}

// MaybeRun runs one of the package's programs when the process was
// started as one, and exits; otherwise it returns at once. The package's
// init calls it; a main may call it too (it is then a no-op).
func MaybeRun() {
	if len(os.Args) == 0 {
		return
	}
	switch os.Args[0] {
	case HelperArg0:
		os.Exit(helperMain(os.Args[1:]))
	case LimitArg0:
		os.Exit(limitExecMain(os.Args[1:]))
	case WatchArg0:
		os.Exit(watchMain(os.Args[1:]))
	}
}

func init() { MaybeRun() }
