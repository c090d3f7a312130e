// Command escaper is a test program for process containment: run as a
// pack command, a background job or a stdio MCP server, it leaves behind
// processes that try to outlive their call, then kills its own parent
// (toolgate's helper, once toolgate's supervisor) with SIGKILL.
//
//	escaper TECHNIQUE FILE [SERVER ARGS...]
//
// Each survivor carries FILE in its argv (tests find them by it in
// /proc), writes "ready" to FILE and then appends a line to it every few
// milliseconds for as long as it lives: FILE growing after a call means a
// process outlived it. TECHNIQUE is how the survivor leaves:
//
//	supervisor-killed  a plain background child (in the command's group)
//	setsid             a child in a session of its own
//	double-fork        fork, setsid, fork: the daemon's way
//	ignore-term        a setsid child that ignores SIGTERM
//	setpgid            a child in a process group of its own
//	fork-loop          a child in its own group that forks survivors in a
//	                   loop (maxLoopForks of them, then survives itself)
//
// With SERVER ARGS it then executes the server in its place (a stdio MCP
// server whose session the test ends).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// maxLoopForks bounds the fork loop.
const maxLoopForks = 40

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: escaper TECHNIQUE FILE [SERVER ARGS...]")
		os.Exit(2)
	}
	role, file := os.Args[1], os.Args[2]
	switch role {
	case "survivor":
		survive(file, false)
	case "survivor-ignoring-term":
		survive(file, true)
	case "middle":
		spawn(file, "survivor", nil)
		os.Exit(0)
	case "looper":
		// Bounded, so that where containment fails the machine survives.
		for range maxLoopForks {
			spawn(file, "survivor", nil)
			time.Sleep(5 * time.Millisecond)
		}
		survive(file, false)
	}
	switch role {
	case "supervisor-killed":
		spawn(file, "survivor", nil)
	case "setsid":
		spawn(file, "survivor", &syscall.SysProcAttr{Setsid: true})
	case "double-fork":
		spawn(file, "middle", &syscall.SysProcAttr{Setsid: true})
	case "ignore-term":
		spawn(file, "survivor-ignoring-term", &syscall.SysProcAttr{Setsid: true})
	case "setpgid":
		spawn(file, "survivor", &syscall.SysProcAttr{Setpgid: true})
	case "fork-loop":
		spawn(file, "looper", &syscall.SysProcAttr{Setpgid: true})
	default:
		fmt.Fprintf(os.Stderr, "escaper: unknown technique %q\n", role)
		os.Exit(2)
	}
	// A condition, not a sleep: the survivor is running once it wrote.
	deadline := time.Now().Add(3 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if strings.HasPrefix(string(b), "ready") {
			break
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "escaper: the survivor never started")
			os.Exit(1)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getppid(), syscall.SIGKILL); err != nil {
		fmt.Fprintln(os.Stderr, "escaper: killing the parent:", err)
	}
	if len(os.Args) > 3 {
		path, err := exec.LookPath(os.Args[3])
		if err == nil {
			err = syscall.Exec(path, os.Args[3:], os.Environ())
		}
		fmt.Fprintln(os.Stderr, "escaper: exec server:", err)
		os.Exit(1)
	}
}

// spawn starts this program again as role, FILE in its argv, detached
// from stdio (so that nothing but containment ends it).
func spawn(file, role string, attr *syscall.SysProcAttr) {
	cmd := exec.Command("/proc/self/exe", role, file)
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "escaper:", err)
		os.Exit(1)
	}
}

// survive writes "ready" to file, then a line every few milliseconds,
// forever.
func survive(file string, ignoreTerm bool) {
	if ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		os.Exit(1)
	}
	_, _ = f.WriteString("ready\n")
	for {
		time.Sleep(5 * time.Millisecond)
		_, _ = fmt.Fprintf(f, "alive %d\n", os.Getpid())
	}
}
