package main

import (
	"context"
	"fmt"
)

func runDemo(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stderr, "toolgate demo: not built yet")
	return exitFail
}
