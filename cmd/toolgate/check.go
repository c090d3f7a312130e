package main

import (
	"context"
	"fmt"
)

func runCheck(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stderr, "toolgate check: not built yet")
	return exitFail
}
