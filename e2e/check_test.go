package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	for _, glob := range []string{"workspace/testdata/invalid/*.yaml", "grantcheck/testdata/*_invalid.yaml", "grantcheck/testdata/loaded/*.yaml", "packs/testdata/requires/invalid*.yaml"} {
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
			got := strings.NewReplacer("workspace/testdata/", "testdata/", "grantcheck/testdata/", "testdata/").Replace(r.stderr)
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

// TestCheckListsGrantErrorsWithLoadErrors: a file with load errors gets
// its grant, rule and requires errors in the same run, sorted by position,
// without second errors about what a load error already explains.
func TestCheckListsGrantErrorsWithLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", `version: 1
command_packs:
  - id: files
    permission: careful
    requires: [{binary: toolgate-e2e-no-such-binary}]
    commands:
      - {id: cat, argv: [cat, "{path}"], inputs: {type: object, properties: {path: {type: string}}}, effects: read}
  - id: notes
    commands:
      - {id: list, argv: [ls], effects: reed}
  - tools
agents:
  - id: reader
    token: s3cr3t
    grants:
      - tool:files:nope
      - pack:notes
      - pack:tools
      - tool:*
gateway:
  approvals:
    rules:
      - {agent: nobody, capability: "tool:files:cat"}
`)
	r := toolgate(t, dir, nil, "check", "-w", "toolgate.yaml")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	want := []string{
		`toolgate.yaml:4:17: unknown permission tier "careful"`,
		`toolgate.yaml:5:16: pack "files" requires toolgate-e2e-no-such-binary, which is not found on PATH`,
		`toolgate.yaml:10:41: unknown effect "reed"`,
		`toolgate.yaml:11:5: workspace.command_packs[2] must be a mapping`,
		`toolgate.yaml:14:12: secrets are never written inline`,
		`toolgate.yaml:16:9: agent "reader": grant tool:files:nope: pack "files" has no command "nope"`,
		`toolgate.yaml:19:9: agent "reader": grant tool:*: a grant of every tool on every surface is refused`,
		`toolgate.yaml:23:9: approval rule: agent "nobody" is not declared`,
		"8 problems; the workspace was not loaded",
	}
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), r.stderr)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want it to start with %q", i+1, lines[i], w)
		}
	}
}

// TestServeRefusesLoadErrors: the workspace a load with errors returns is
// for check alone; serve still refuses to start (fail-closed), and says
// why. A gateway that started would be killed at the deadline, failing
// the test, rather than hanging it.
func TestServeRefusesLoadErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "toolgate.yaml", `version: 1
command_packs:
  - id: files
    permission: careful
    commands:
      - {id: cat, argv: [cat, x], effects: read}
agents:
  - id: reader
    grants: [pack:files]
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "-w", "toolgate.yaml", "--listen", "127.0.0.1:0", "--audit", filepath.Join(dir, "audit.jsonl"))
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || ctx.Err() != nil {
		t.Fatalf("serve = %v (context %v), want exit 1\n%s", err, ctx.Err(), out)
	}
	if !strings.Contains(string(out), `toolgate.yaml:4:17: unknown permission tier "careful"`) {
		t.Errorf("serve output lacks the load error:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "audit.jsonl")); err == nil {
		t.Errorf("serve opened its audit log for a workspace it refused")
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
