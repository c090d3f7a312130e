package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startCPUProfile is a hidden switch for performance work: with
// TOOLGATE_CPUPROFILE=<file> set, the whole run is CPU-profiled into that
// file, written when the command returns (for serve: on SIGINT/SIGTERM).
// `go run ./scripts/bench -profile FILE` uses it. The returned function
// stops the profile; it does nothing when the variable is unset.
func startCPUProfile(getenv func(string) string) (stop func()) {
	path := getenv("TOOLGATE_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "toolgate: TOOLGATE_CPUPROFILE: %v\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "toolgate: TOOLGATE_CPUPROFILE: %v\n", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
