package main

import (
	"context"
	"fmt"
)

func runPolicy(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stderr, "toolgate policy: not built yet")
	return exitFail
}
