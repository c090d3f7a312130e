package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestGlobalFlagsAnywhere checks that --log-level and --log-format are
// accepted before and after the subcommand (after used to be "unknown
// flag"), that the last one given wins, that bad values are usage errors
// naming the fix, and that a -w before the subcommand reaches it.
func TestGlobalFlagsAnywhere(t *testing.T) {
	t.Parallel()
	const ws = "../../examples/command-packs/toolgate.yaml"
	cases := []struct {
		name      string
		args      []string
		code      int
		level     slog.Level
		json      bool
		stdout    string // substring
		stderr    string // substring
		notStderr string
	}{
		{name: "none", args: []string{"version"}, code: exitOK, level: slog.LevelInfo, stdout: "toolgate "},
		{name: "level before", args: []string{"--log-level", "debug", "version"}, code: exitOK, level: slog.LevelDebug},
		{name: "level after", args: []string{"version", "--log-level", "debug"}, code: exitOK, level: slog.LevelDebug},
		{name: "level after with =", args: []string{"version", "--log-level=warn"}, code: exitOK, level: slog.LevelWarn},
		{name: "last wins", args: []string{"--log-level", "debug", "version", "--log-level", "error"}, code: exitOK, level: slog.LevelError},
		{name: "format before", args: []string{"--log-format", "json", "version"}, code: exitOK, level: slog.LevelInfo, json: true},
		{name: "format after", args: []string{"version", "--log-format", "JSON"}, code: exitOK, level: slog.LevelInfo, json: true},
		{name: "format back to text", args: []string{"--log-format", "json", "version", "--log-format", "text"}, code: exitOK, level: slog.LevelInfo},
		{name: "bad level before", args: []string{"--log-level", "loud", "version"}, code: exitUsage, level: slog.LevelInfo, stderr: "use debug, info, warn or error"},
		{name: "bad level after", args: []string{"version", "--log-level", "loud"}, code: exitUsage, level: slog.LevelInfo, stderr: "use debug, info, warn or error"},
		{name: "bad format after", args: []string{"version", "--log-format", "xml"}, code: exitUsage, level: slog.LevelInfo, stderr: "use text or json"},
		{name: "nested subcommand", args: []string{"approvals", "list", "--log-level", "debug", "--help"}, code: exitOK, level: slog.LevelDebug},
		{name: "serve help lists globals", args: []string{"serve", "--log-level", "debug", "--help"}, code: exitOK, level: slog.LevelDebug, stderr: "--log-level"},
		{name: "unknown flag still refused", args: []string{"version", "--log-levels", "debug"}, code: exitUsage, level: slog.LevelInfo, stderr: "unknown flag"},
		{name: "workspace before", args: []string{"-w", ws, "check"}, code: exitOK, level: slog.LevelInfo, stdout: "ok (revision"},
		{name: "workspace before, missing", args: []string{"-w", "/nonexistent/toolgate.yaml", "check"}, code: exitFail, level: slog.LevelInfo, stderr: "nonexistent"},
		{name: "subcommand workspace wins", args: []string{"-w", "/nonexistent/toolgate.yaml", "check", "-w", ws, "--log-level", "debug"}, code: exitOK, level: slog.LevelDebug, notStderr: "nonexistent"},
		{name: "workspace after a subcommand without one", args: []string{"version", "-w", ws}, code: exitUsage, level: slog.LevelInfo, stderr: "unknown shorthand flag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			c := &cli{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
			code := c.main(context.Background(), tc.args)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out.String(), errb.String())
			}
			if got := c.level.Level(); got != tc.level {
				t.Errorf("level %v, want %v", got, tc.level)
			}
			_, isJSON := c.log.Handler().(*slog.JSONHandler)
			if isJSON != tc.json {
				t.Errorf("JSON handler %v, want %v", isJSON, tc.json)
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.stdout, out.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, errb.String())
			}
			if tc.notStderr != "" && strings.Contains(errb.String(), tc.notStderr) {
				t.Errorf("stderr has %q:\n%s", tc.notStderr, errb.String())
			}
		})
	}
}

// TestLogLevelReachesLogger checks the level set after the subcommand
// governs what the logger writes, in the format chosen.
func TestLogLevelReachesLogger(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }}
	if code := c.main(context.Background(), []string{"version", "--log-format", "json", "--log-level", "debug"}); code != exitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	c.log.Debug("probe", "k", "v")
	if !strings.Contains(errb.String(), `"msg":"probe"`) {
		t.Fatalf("debug line not written as JSON: %q", errb.String())
	}
}
