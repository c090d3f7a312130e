package main

import (
	"context"
	"fmt"
)

func runAudit(_ context.Context, c *cli, _ []string) int {
	fmt.Fprintln(c.stderr, "toolgate audit: not built yet")
	return exitFail
}
