//go:build !linux

package supervisor

import (
	"fmt"
	"os"
)

// Default is empty where there is no supervisor (it needs Linux's
// PR_SET_CHILD_SUBREAPER and /proc).
const Default = ""

func superviseMain([]string) int {
	fmt.Fprintln(os.Stderr, "toolgate supervisor: not available on this operating system")
	return 125
}

func limitExecMain([]string) int { return superviseMain(nil) }
