package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/bundled"
)

func runPacksCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, log: slog.New(slog.DiscardHandler)}
	code = c.main(context.Background(), append([]string{"packs"}, args...))
	return code, out.String(), errb.String()
}

// TestPacksListJSON checks the documented shape of `packs list --format
// json` and that availability reflects this machine: git is here (the
// tests need it), a pack whose binary is absent is reported unavailable.
func TestPacksListJSON(t *testing.T) {
	t.Parallel()
	code, out, errOut := runPacksCLI(t, "list", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var list []struct {
		ID       string `json:"id"`
		Commands []struct {
			ID      string `json:"id"`
			Effects string `json:"effects"`
		} `json:"commands"`
		Requires []struct {
			Binary  string `json:"binary"`
			Version string `json:"version"`
		} `json:"requires"`
		Available *bool `json:"available"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	if len(list) != len(bundled.IDs()) {
		t.Fatalf("%d packs listed, %d bundled", len(list), len(bundled.IDs()))
	}
	byID := map[string]int{}
	for i, p := range list {
		byID[p.ID] = i
		if len(p.Commands) == 0 || len(p.Requires) == 0 || p.Available == nil {
			t.Errorf("pack %s: %d commands, %d requires, available %v", p.ID, len(p.Commands), len(p.Requires), p.Available)
		}
		for _, c := range p.Commands {
			if c.Effects != "read" && c.Effects != "write" {
				t.Errorf("%s:%s effects %q", p.ID, c.ID, c.Effects)
			}
		}
		_, err := exec.LookPath(p.Requires[0].Binary)
		if !*p.Available && err == nil && p.Requires[0].Version == "" {
			t.Errorf("%s: %s is on PATH, yet reported unavailable", p.ID, p.Requires[0].Binary)
		}
		if *p.Available && err != nil {
			t.Errorf("%s: %s is not on PATH, yet reported available", p.ID, p.Requires[0].Binary)
		}
	}
	git := list[byID["git"]]
	if !*git.Available || git.Requires[0].Binary != "git" {
		t.Errorf("git pack = %+v; git is installed here", git)
	}
}

func TestPacksShow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args     []string
		wantCode int
		want     []string
	}{
		{[]string{"show", "git"}, exitOK, []string{"git: Read a git", "requires:   git >=2.24", "available:  yes", "commit  [write; scopes repo:write]", "argv: git --no-pager"}},
		{[]string{"show", "gh"}, exitOK, []string{"credentials: gh-token", "pr-list  [read; scopes github:read]"}},
		{[]string{"show", "coding-agent-claude"}, exitOK, []string{"start  [write; scopes agent:delegate; background; timeout 1h0m0s]"}},
		{[]string{"list"}, exitOK, []string{"PACK", "json-tools", "start(w&)"}},
		{[]string{"show", "nope"}, exitFail, []string{`no bundled pack "nope"`}},
		{[]string{"show"}, exitUsage, []string{"want `list` or `show ID`"}},
		{[]string{"list", "--format", "yaml"}, exitUsage, []string{"use text or json"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			code, out, errOut := runPacksCLI(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.wantCode, out, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
		})
	}
}
