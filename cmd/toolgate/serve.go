package main

import (
	"context"
	"fmt"
)

func runServe(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stderr, "toolgate serve: not built yet")
	return exitFail
}
