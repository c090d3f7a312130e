// Package supervisor is the process toolgate puts between the gateway and
// each pack command: a child subreaper that bounds the command's memory
// before it runs and stops its whole process tree — setsid and
// double-forked children included — when the command ends, when the
// gateway asks, and when the gateway dies. It is the toolgate binary itself,
// re-executed under a name no person types (argv[0] Arg0 or LimitArg0).
//
// The package's init runs the supervisor when the process was started as
// one, and exits. Go initialises packages in import-path order as soon as
// their imports are: this one imports only os, os/signal, syscall and
// packages with nothing to initialise (no os/exec, whose path/filepath
// waits behind half the binary; no encoding/json; no x/sys/unix), so it
// runs right after os/signal — before the protobuf registries, telemetry
// and JSON Schema metaschemas the rest of the binary sets up, none of
// which a supervisor needs. Its reader, the gateway, decodes the report in
// package packs.
package supervisor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
	"unicode/utf8"
)

// The names (argv[0]) under which the toolgate binary runs as a command's
// supervisor and as the memory-limit shim.
const (
	Arg0      = "toolgate-supervise"
	LimitArg0 = "toolgate-limit-exec"
)

// FirstFD is the descriptor of the first file handed to the command (the
// bound path_within files); 0-2 are the standard streams.
const FirstFD = 3

// Args is the supervisor's command line:
//
//	toolgate-supervise -files N -as BYTES -grace MS -- PROGRAM ARGV0 ARGS...
//
// Its descriptors: 0-2 the command's standard streams, 3..3+N-1 files
// passed on to the command at the same numbers, 3+N the control pipe (read
// end: a byte or end of file means stop), 3+N+1 the report pipe (write end:
// one JSON Report before the supervisor exits).
type Args struct {
	// Files is how many descriptors from FirstFD on the command gets.
	Files int
	// AS is the command's address-space bound in bytes (RLIMIT_AS), 0 for
	// none.
	AS int64
	// Grace is the wait between SIGTERM and SIGKILL.
	Grace time.Duration
	// Program is the resolved path of the program; Argv its argv (Argv[0]
	// included).
	Program string
	Argv    []string
}

// Encode is the supervisor's argv, Arg0 first.
func (a Args) Encode() []string {
	out := []string{Arg0, "-files", strconv.Itoa(a.Files), "-as", strconv.FormatInt(a.AS, 10),
		"-grace", strconv.FormatInt(a.Grace.Milliseconds(), 10), "--", a.Program}
	return append(out, a.Argv...)
}

// ParseArgs reads what Encode wrote (without argv[0]).
func ParseArgs(args []string) (Args, error) {
	var a Args
	for len(args) > 0 && args[0] != "--" {
		if len(args) < 2 {
			return a, fmt.Errorf("option %s has no value", args[0])
		}
		n, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || n < 0 {
			return a, fmt.Errorf("option %s: %q is not a count", args[0], args[1])
		}
		switch args[0] {
		case "-files":
			a.Files = int(n)
		case "-as":
			a.AS = n
		case "-grace":
			a.Grace = time.Duration(n) * time.Millisecond
		default:
			return a, fmt.Errorf("unknown option %s", args[0])
		}
		args = args[2:]
	}
	if len(args) < 3 {
		return a, errors.New("no program after --")
	}
	a.Program, a.Argv = args[1], args[2:]
	return a, nil
}

// Report is what the supervisor tells the gateway about a run.
type Report struct {
	// Exit is the command's exit status, Signal the signal that killed it
	// (0 when it exited).
	Exit   int `json:"exit"`
	Signal int `json:"signal,omitempty"`
	// MaxRSS is the command's peak resident set, in bytes.
	MaxRSS int64 `json:"maxrss,omitempty"`
	// Killed counts descendants still running when the command ended or
	// was stopped, all of them killed; OutsideGroup counts those among them
	// that had left the process group (setsid).
	Killed       int `json:"killed,omitempty"`
	OutsideGroup int `json:"outside_group,omitempty"`
	// CleanupMS is how long stopping the descendants took.
	CleanupMS int64 `json:"cleanup_ms,omitempty"`
	// StartError is set when the command could not be started.
	StartError string `json:"start_error,omitempty"`
	// Limit says how max_memory was put in force: LimitTraced or
	// LimitShim; "" when the command had no bound.
	Limit string `json:"limit,omitempty"`
}

// How a supervisor bounds a command's memory before the program runs.
const (
	// LimitTraced: the command starts traced, stops at its execve, gets
	// RLIMIT_AS from the supervisor and is released (one process start).
	LimitTraced = "traced"
	// LimitShim: the command starts as the toolgate binary under
	// LimitArg0, which sets RLIMIT_AS on itself and executes the program
	// (two process starts); used for set-user-ID programs and where
	// tracing is not allowed.
	LimitShim = "shim"
)

// Encode is the report's JSON (one object, the fields of Report's tags,
// zero values left out), written by hand: encoding/json would make this
// package initialise late, and its first use of a type (reflection) was a
// visible share of a supervisor's CPU.
func (r Report) Encode() []byte {
	b := append(make([]byte, 0, 128), `{"exit":`...)
	b = strconv.AppendInt(b, int64(r.Exit), 10)
	for _, f := range []struct {
		name string
		v    int64
	}{{"signal", int64(r.Signal)}, {"maxrss", r.MaxRSS}, {"killed", int64(r.Killed)}, {"outside_group", int64(r.OutsideGroup)}, {"cleanup_ms", r.CleanupMS}} {
		if f.v != 0 {
			b = append(append(append(b, `,"`...), f.name...), `":`...)
			b = strconv.AppendInt(b, f.v, 10)
		}
	}
	if r.StartError != "" {
		b = appendJSONString(append(b, `,"start_error":`...), r.StartError)
	}
	if r.Limit != "" {
		b = appendJSONString(append(b, `,"limit":`...), r.Limit)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string: quote, backslash and
// control characters escaped, invalid UTF-8 as U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, r := range s { // invalid bytes come out as utf8.RuneError
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xF])
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

// MaybeRun runs the supervisor or the memory-limit shim when the process
// was started as one of them, and exits; otherwise it returns at once. The
// package's init calls it; a main may call it too (it is then a no-op).
func MaybeRun() {
	if len(os.Args) == 0 {
		return
	}
	switch os.Args[0] {
	case Arg0:
		os.Exit(superviseMain(os.Args[1:]))
	case LimitArg0:
		os.Exit(limitExecMain(os.Args[1:]))
	}
}

func init() { MaybeRun() }
