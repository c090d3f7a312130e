// Command detacher is a test program for the process-tree bounds: it
// starts a copy of itself that leaves its process group and session
// (setsid), ignores SIGTERM and writes its pid to PIDFILE; then it returns
// (mode "return") or waits forever (mode "hang").
//
//	detacher PIDFILE return|hang
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: detacher PIDFILE return|hang|child")
		os.Exit(2)
	}
	pidFile, mode := os.Args[1], os.Args[2]
	if mode == "child" {
		signal.Ignore(syscall.SIGTERM)
		if err := os.WriteFile(pidFile, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			os.Exit(1)
		}
		for {
			time.Sleep(time.Hour)
		}
	}
	child := exec.Command(os.Args[0], pidFile, "child")
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for {
		if _, err := os.Stat(pidFile); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if mode == "hang" {
		for {
			time.Sleep(time.Hour)
		}
	}
	fmt.Println("detached", child.Process.Pid)
}
