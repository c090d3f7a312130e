package main

import (
	"runtime/debug"
	"testing"
)

func TestVersionString(t *testing.T) {
	vcs := func(rev, mod string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: "2026-12-01T10:00:00Z"}, {Key: "vcs.modified", Value: mod}}
	}
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "toolgate (devel)"},
		{"work tree build", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true, "toolgate (devel) (go1.26.8)"},
		{"module version", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.4.0"}}, true, "toolgate v1.4.0 (go1.26.8)"},
		{"clean checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201100000-abcdef012345"}, Settings: vcs("abcdef0123456789", "false")}, true,
			"toolgate v0.0.0-20261201100000-abcdef012345 (revision abcdef0123456789, 2026-12-01T10:00:00Z, go1.26.8)"},
		{"dirty checkout", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261201100000-abcdef012345+dirty"}, Settings: vcs("abcdef0123456789", "true")}, true,
			"toolgate v0.0.0-20261201100000-abcdef012345+dirty (revision abcdef0123456789, 2026-12-01T10:00:00Z, dirty, go1.26.8)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionString(tc.info, tc.ok); got != tc.want {
				t.Errorf("versionString = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionStamped: what a release build stamps (scripts/build-release.sh)
// is shown when the build info holds no VCS stamp, and the build info's own
// stamp wins over it.
func TestVersionStamped(t *testing.T) {
	defer func(v, r, m string) { version, revision, modified = v, r, m }(version, revision, modified)
	version, revision, modified = "v2.0.0", "0123abcd", "true"
	info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got, want := versionString(info, true), "toolgate v2.0.0 (revision 0123abcd, dirty, go1.26.8)"; got != want {
		t.Errorf("stamped: %q, want %q", got, want)
	}
	info.Settings = []debug.BuildSetting{{Key: "vcs.revision", Value: "fedcba98"}, {Key: "vcs.modified", Value: "false"}}
	if got, want := versionString(info, true), "toolgate v2.0.0 (revision fedcba98, go1.26.8)"; got != want {
		t.Errorf("build info over stamp: %q, want %q", got, want)
	}
}
