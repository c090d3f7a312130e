// Command standin plays, by the name it is run under, the programs the
// bundled packs drive that need a network or a login here: gh, claude,
// codex and opencode. With --version it prints a version banner in that
// program's own format; otherwise it prints what it was given (argv, working
// directory, and for gh the GH_TOKEN it sees) as one JSON object, so a test
// can check exactly what reached the program.
//
// Under the name jobber it is a long-running job for the background job
// tests: jobber DIR LINES writes its pid to DIR/leader.pid, starts a child
// (sleep) in its own process group and writes its pid to DIR/child.pid,
// prints LINES numbered lines, and then waits forever, ignoring SIGTERM, so
// only a SIGKILL of the whole group ends it.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

var versions = map[string]string{
	"gh":       "gh version 2.63.0 (2024-11-27)\nhttps://github.com/cli/cli/releases/tag/v2.63.0",
	"claude":   "1.0.120 (Claude Code)",
	"codex":    "codex-cli 0.40.0",
	"opencode": "0.9.0",
}

func main() {
	name := filepath.Base(os.Args[0])
	if name == "jobber" {
		jobber(os.Args[1:])
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "--version" {
		fmt.Println(versions[name])
		return
	}
	wd, _ := os.Getwd()
	out := map[string]any{"program": name, "argv": os.Args[1:], "cwd": wd}
	if name == "gh" {
		out["gh_token"] = os.Getenv("GH_TOKEN")
	}
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
}

func jobber(args []string) {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: jobber DIR LINES")
		os.Exit(2)
	}
	signal.Ignore(syscall.SIGTERM)
	dir := args[0]
	n, err := strconv.Atoi(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	child := exec.Command("sleep", "300")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	write(filepath.Join(dir, "child.pid"), child.Process.Pid)
	write(filepath.Join(dir, "leader.pid"), os.Getpid())
	fmt.Fprintln(os.Stderr, "jobber started")
	for i := range n {
		fmt.Printf("line %d\n", i)
	}
	for {
		time.Sleep(time.Hour)
	}
}

func write(path string, pid int) {
	if err := os.WriteFile(path+".tmp", []byte(strconv.Itoa(pid)), 0o644); err != nil {
		os.Exit(1)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		os.Exit(1)
	}
}
