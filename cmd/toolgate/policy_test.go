package main

import (
	"strings"
	"testing"
)

// TestPolicyDemoCases runs the shipped golden cases against the demo
// workspace: the demo's decisions are pinned.
func TestPolicyDemoCases(t *testing.T) {
	t.Parallel()
	code, out, errOut := runGrantCLI(t, "policy", "test", "-w", demoWorkspace, "../../examples/command-packs/policy-cases.yaml")
	if code != exitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.HasSuffix(out, "13 passed, 0 failed\n") {
		t.Errorf("output %q", out)
	}
}

func TestPolicyMismatch(t *testing.T) {
	t.Parallel()
	cases := writeGrantFile(t, "cases.yaml", `
- name: reader edits
  agent: reader
  tool: json-tools:edit-in-place
  args: {filter: ".", file: a.json}
  expect: allow
- name: reader queries
  agent: reader
  tool: json-tools:query
  args: {filter: ".", file: a.json}
  expect: allow
  reason_contains: strict
- name: editor edits
  agent: editor
  tool: json-tools:edit-in-place
  args: {filter: ".", file: a.json}
  expect: approval
`)
	code, out, _ := runGrantCLI(t, "policy", "test", "-w", demoWorkspace, cases)
	if code != exitFail {
		t.Errorf("exit %d, want %d", code, exitFail)
	}
	want := `FAIL  reader edits (` + cases + `:1:3)
      call:     agent reader → json-tools:edit-in-place
      expected: allow
      got:      deny (at the grant stage)
      reason:   unknown tool "json-tools:edit-in-place"
FAIL  reader queries (` + cases + `:6:3)
      call:     agent reader → json-tools:query
      expected: allow, reason containing "strict"
      got:      allow (at the tier stage)
      reason:   cautious tier: read allowed
1 passed, 2 failed
`
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestPolicyCasesStrict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		wants         []string
	}{
		{"unknown key", `
- name: a
  agent: reader
  tool: json-tools:query
  expect: allow
  expected: deny
`, []string{":5:3: unknown key \"expected\" in a case; valid keys are: agent, args, expect, name, reason_contains, tool"}},
		{"bad values", `
- name: a
  agent: reader
  tool: json-tools
  expect: maybe
  args: [1, 2]
- name: a
  agent: reader
  tool: json-tools:query
  expect: allow
  agent: editor
`, []string{
			`:3:9: tool: "json-tools" is not SURFACE:MEMBER`,
			`:4:11: expect "maybe": use allow, approval or deny`,
			":5:9: args must be a mapping",
			`:6:3: case name "a" is used twice`,
			`:10:3: key "agent" is given twice`,
		}},
		{"missing fields", `
- name: a
- {}
`, []string{":1:3: case needs a non-empty agent:", ":2:3: case needs a non-empty name:"}},
		{"not a list", `name: a`, []string{":1:1: a cases file is a YAML list of cases"}},
		{"syntax", "- name: [a\n", []string{"YAML syntax"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := writeGrantFile(t, "cases.yaml", tt.content)
			code, out, errOut := runGrantCLI(t, "policy", "test", "-w", demoWorkspace, path)
			if code != exitFail || out != "" {
				t.Errorf("exit %d stdout %q, want exit %d and nothing on stdout", code, out, exitFail)
			}
			for _, w := range tt.wants {
				if !strings.Contains(errOut, path+w) && !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

func TestPolicyUsage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"policy"}, exitUsage, "Usage: toolgate policy test"},
		{[]string{"policy", "frob"}, exitUsage, `unknown subcommand "frob"`},
		{[]string{"policy", "test", "-w", demoWorkspace}, exitUsage, "give exactly one cases file"},
		{[]string{"policy", "test", "-w", demoWorkspace, "a.yaml", "b.yaml"}, exitUsage, "give exactly one cases file"},
		{[]string{"policy", "test", "-w", demoWorkspace, "/nonexistent/cases.yaml"}, exitFail, "read cases"},
		{[]string{"policy", "--help"}, exitOK, "Usage: toolgate policy test"},
	}
	for _, tt := range tests {
		code, _, errOut := runGrantCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
}
