//go:build linux

package supervisor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// helperMain is the portable helper (HelperArgs is its command line): it
// starts the command — through the shim when it has a bound, since a Go
// program cannot set a limit between fork and exec — waits for it and
// writes its wait status as a report record.
func helperMain(args []string) int {
	// One P: the helper only waits.
	runtime.GOMAXPROCS(1)
	if len(args) < 4 {
		fmt.Fprintln(os.Stderr, "toolgate helper: usage: REPORT_FD AS_BYTES PROGRAM ARGV0 [ARGS...]")
		return 125
	}
	fd, err1 := strconv.Atoi(args[0])
	as, err2 := strconv.ParseInt(args[1], 10, 64)
	if err1 != nil || err2 != nil || fd < 3 || as < 0 {
		fmt.Fprintf(os.Stderr, "toolgate helper: bad report descriptor %q or bound %q\n", args[0], args[1])
		return 125
	}
	syscall.CloseOnExec(fd)
	report := os.NewFile(uintptr(fd), "report")
	files := make([]*os.File, fd)
	for i := range files {
		files[i] = os.NewFile(uintptr(i), "inherited")
	}
	path, argv := args[2], args[3:]
	if as > 0 {
		path, argv = SelfExe, append([]string{LimitArg0, args[1], "--", args[2]}, args[3:]...)
	}
	env := os.Environ()
	if as == 0 {
		env = withoutRaceEnv(env)
	}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{Env: env, Files: files})
	if err != nil {
		writeRecord(report, RecordExecFailed, errnoOf(err))
		return 127
	}
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(p.Pid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			writeRecord(report, RecordWaitFailed, errnoOf(err))
			return 125
		}
		writeRecord(report, RecordStatus, uint32(ws))
		return 0
	}
}

// RaceEnv is what a race-detector build of the gateway adds to the
// environment of a re-executed toolgate, so that its exit does not sleep
// a second (GORACE's atexit_sleep_ms); the helper and the shim take it out
// again before the command starts.
const RaceEnv = "GORACE=atexit_sleep_ms=0"

func withoutRaceEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if kv != RaceEnv {
			out = append(out, kv)
		}
	}
	return out
}

func errnoOf(err error) uint32 {
	var e syscall.Errno
	if errors.As(err, &e) {
		return uint32(e)
	}
	return uint32(syscall.EINVAL)
}

func writeRecord(f *os.File, tag, value uint32) {
	var b [RecordSize]byte
	binary.LittleEndian.PutUint32(b[:4], tag)
	binary.LittleEndian.PutUint32(b[4:], value)
	_, _ = f.Write(b[:])
}

// limitExecMain is the memory-limit shim: toolgate-limit-exec BYTES --
// PROGRAM ARGV0 ARGS... sets RLIMIT_AS (soft and hard, so the command
// cannot raise it) and executes the program in its place. Everything the
// exec needs is built before the limit is set, so nothing is allocated
// under it.
func limitExecMain(args []string) int {
	if len(args) < 4 || args[1] != "--" {
		fmt.Fprintln(os.Stderr, "toolgate limit-exec: usage: BYTES -- PROGRAM ARGV0 [ARGS...]")
		return 125
	}
	as, err := strconv.ParseUint(args[0], 10, 64)
	if err != nil || as == 0 {
		fmt.Fprintf(os.Stderr, "toolgate limit-exec: %q is not a byte count\n", args[0])
		return 125
	}
	path, err := syscall.BytePtrFromString(args[2])
	if err != nil {
		return 125
	}
	argv, err := syscall.SlicePtrFromStrings(args[3:])
	if err != nil {
		return 125
	}
	envv, err := syscall.SlicePtrFromStrings(withoutRaceEnv(os.Environ()))
	if err != nil {
		return 125
	}
	lim := syscall.Rlimit{Cur: as, Max: as}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, syscall.RLIMIT_AS, uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
		fmt.Fprintf(os.Stderr, "toolgate limit-exec: setting max_memory (RLIMIT_AS %d): %v\n", as, e)
		return 126
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(path)), uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	fmt.Fprintf(os.Stderr, "toolgate limit-exec: %s: %v\n", strings.ToValidUTF8(args[2], "?"), e)
	return 127
}
