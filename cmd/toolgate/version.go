package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"
)

// What a release build may stamp (-ldflags "-X main.version=v1.2.3 -X
// main.revision=… -X main.modified=true", as scripts/build-release.sh does):
// version names the release, else the build info's module version does;
// revision and modified stand in for the build info's VCS stamp when the go
// command could not take one (a git worktree, -buildvcs=false).
var version, revision, modified string

// versionString is what `toolgate version` and `--version` print: the
// release (or the module version the go command stamped, "(devel)" for a
// build from a work tree), then the VCS revision, its time and whether the
// tree had uncommitted changes, read from the binary's build info, so a
// binary says what it was built from without any build flag.
func versionString(info *debug.BuildInfo, ok bool) string {
	v := version
	if v == "" && ok && info.Main.Version != "" {
		v = info.Main.Version
	}
	if v == "" {
		v = "(devel)"
	}
	rev, when, dirty := revision, "", ""
	if modified == "true" {
		dirty = "dirty"
	}
	if ok {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = ""
				if s.Value == "true" {
					dirty = "dirty"
				}
			}
		}
	}
	var b strings.Builder
	b.WriteString("toolgate " + v)
	var extra []string
	if rev != "" {
		extra = append(extra, "revision "+rev)
	}
	if when != "" {
		extra = append(extra, when)
	}
	if dirty != "" {
		extra = append(extra, dirty)
	}
	if ok && info.GoVersion != "" {
		extra = append(extra, info.GoVersion)
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	return b.String()
}

func runVersion(_ context.Context, c *cli, args []string) int {
	fs := c.flagSet("version", "version")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	fmt.Fprintln(c.stdout, versionString(debug.ReadBuildInfo()))
	return exitOK
}
