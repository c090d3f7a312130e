package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheckExample(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	r := toolgate(t, root, nil, "check", "-w", "examples/command-packs/toolgate.yaml")
	if r.code != 0 {
		t.Fatalf("check exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"reader", "json-tools:query", "notes:list",
		"editor", "json-tools:edit-in-place  write  strict  approval",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check summary lacks %q:\n%s", want, r.stdout)
		}
	}
	r = toolgate(t, root, nil, "check", "-w", "examples/command-packs/toolgate.yaml", "--format", "json")
	if r.code != 0 || !strings.Contains(r.stdout, `"decision": "approval"`) {
		t.Errorf("check --format json: exit %d\n%s", r.code, r.stdout)
	}
}

var errLineRE = regexp.MustCompile(`^[^\s:]+\.yaml:\d+:\d+: \S`)

// TestCheckInvalidFixtures runs the binary on every invalid fixture of the
// loader, the grant compiler and the requires checks: each exits 1 with
// every stderr line in FILE:LINE:COL form (the workspace goldens, compared
// exactly, are what the loader's own tests pin).
func TestCheckInvalidFixtures(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	var fixtures []string
	for _, glob := range []string{"workspace/testdata/invalid/*.yaml", "grantcheck/testdata/*_invalid.yaml", "packs/testdata/requires/invalid*.yaml"} {
		m, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil {
			t.Fatal(err)
		}
		fixtures = append(fixtures, m...)
	}
	if len(fixtures) < 20 {
		t.Fatalf("found only %d invalid fixtures", len(fixtures))
	}
	for _, f := range fixtures {
		rel, _ := filepath.Rel(root, f)
		r := toolgate(t, root, nil, "check", "-w", rel)
		if r.code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", rel, r.code, r.stderr)
			continue
		}
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		for _, l := range lines {
			if strings.HasSuffix(l, "the workspace was not loaded") {
				continue
			}
			if !errLineRE.MatchString(l) {
				t.Errorf("%s: stderr line not FILE:LINE:COL: %q", rel, l)
			}
		}
		golden := strings.TrimSuffix(f, ".yaml") + ".err"
		if want, err := os.ReadFile(golden); err == nil {
			got := strings.ReplaceAll(r.stderr, "workspace/testdata/", "testdata/")
			for _, wl := range strings.Split(strings.TrimSpace(string(want)), "\n") {
				if !strings.Contains(got, wl) {
					t.Errorf("%s: stderr lacks golden line %q\n%s", rel, wl, r.stderr)
				}
			}
		}
	}
}

func TestCheckReportsEveryError(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", `version: 1
command_packs:
  - id: p
    permission: careful
    commands:
      - id: c
        argv: [sh, -c, "{x}"]
        inputs: {type: object, properties: {x: {type: string}}}
    env: {TOKEN: "{credential.gh}"}
agents:
  - id: a
    grants: [pack:p]
`)
	r := toolgate(t, dir, nil, "check", "-w", "toolgate.yaml")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, want := range []string{
		"toolgate.yaml:4:17: unknown permission tier \"careful\"",
		"toolgate.yaml:7:16: command p:c runs a shell",
		"toolgate.yaml:9:11: pack p env TOKEN references credential \"gh\", which is not declared",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	for _, args := range [][]string{
		{"nosuch"},
		{"check", "--format", "yaml", "-w", "examples/command-packs/toolgate.yaml"},
		{"serve", "--stdio"},
	} {
		if r := toolgate(t, root, nil, args...); r.code != 2 {
			t.Errorf("toolgate %v: exit %d, want 2 (usage)\n%s", args, r.code, r.stderr)
		}
	}
	for _, args := range [][]string{{"help"}, {"check", "--help"}, {"serve", "-h"}, {"version"}} {
		if r := toolgate(t, root, nil, args...); r.code != 0 {
			t.Errorf("toolgate %v: exit %d, want 0", args, r.code)
		}
	}
}
