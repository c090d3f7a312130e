package main

import (
	"context"
	"fmt"

	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/harness"
)

func runParity(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("parity", "parity [-w FILE] --harness HARNESS.yaml [--format text|json]")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	spec := fs.String("harness", "", "HARNESS.yaml: per agent, the provider and where its allowlist comes from (required)")
	format := fs.String("format", "text", "output format: text or json")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(c.stderr, "toolgate parity: unexpected argument %q (the workspace is given with -w FILE)\n", fs.Arg(0))
		return exitUsage
	case *spec == "":
		fmt.Fprintln(c.stderr, "toolgate parity: --harness HARNESS.yaml is required: it says, per agent, which harness runs it and where its allowlist is")
		return exitUsage
	case *format != "text" && *format != "json":
		fmt.Fprintf(c.stderr, "toolgate parity: --format %q: use text or json\n", *format)
		return exitUsage
	}
	_, policy, err := gateway.Check(ctx, c.workspacePath(*wsFlag))
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	s, err := harness.LoadSpec(*spec, c.getenv)
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	rep := harness.Check(policy, s)
	if *format == "json" {
		err = harness.WriteJSON(c.stdout, rep)
	} else {
		err = harness.WriteText(c.stdout, rep)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "toolgate parity: %v\n", err)
		return exitFail
	}
	if rep.Run != harness.Green {
		return exitFail
	}
	return exitOK
}
