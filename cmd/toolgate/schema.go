package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/workspace"
)

const schemaUsage = "schema"

// runSchema prints the JSON Schema of toolgate.yaml, for editors to
// complete and validate the file (docs/workspace.md says how to use it).
func runSchema(_ context.Context, c *cli, args []string) int {
	fs := c.flagSet("schema", schemaUsage)
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(c.stderr, "toolgate schema: unexpected argument %q; it takes none (redirect its output to a file: toolgate schema > toolgate.schema.json)\n", fs.Arg(0))
		return exitUsage
	}
	b, err := workspace.Schema()
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate schema: %v\n", err)
		return exitFail
	}
	if _, err := c.stdout.Write(b); err != nil {
		fmt.Fprintf(c.stderr, "toolgate schema: %v\n", err)
		return exitFail
	}
	return exitOK
}
