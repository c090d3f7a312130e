//go:build !linux

package supervisor

import (
	"fmt"
	"os"
)

func unavailable() int {
	fmt.Fprintln(os.Stderr, "toolgate: process containment is not available on this operating system")
	return 125
}

func helperMain([]string) int    { return unavailable() }
func limitExecMain([]string) int { return unavailable() }
func watchMain([]string) int     { return unavailable() }
