package main

import (
	"context"
	"fmt"
)

func runExplain(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stderr, "toolgate explain: not built yet")
	return exitFail
}
