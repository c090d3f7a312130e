// Package docs holds no code: its test loads every YAML example written in
// docs/*.md, so that an example an operator copies is one toolgate accepts.
package docs_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// How an example says what it is: the words after "yaml" on its opening
// fence. Renderers read only the first word, so every example still
// highlights as YAML.
//
//	```yaml           a whole workspace: loaded by the real loader
//	                  (workspace.Load, from a directory of its own) and
//	                  given the other checks `toolgate check` runs at load —
//	                  grants compiled (grantcheck.Compile), approval rules
//	                  compiled (approvals.CompileRules) — except `requires`,
//	                  whose verdict depends on the machine's PATH, not on
//	                  the text.
//	```yaml fragment  a part of a workspace written at its top level (a
//	                  gateway: block, an agents: list): wrapped with
//	                  version: 1 and loaded by the real loader (every key,
//	                  type and cross-reference the loader checks); grants
//	                  are not compiled, since the surfaces they name are
//	                  declared elsewhere.
//	```yaml cases     a `toolgate policy test` cases file (the keys that
//	                  command reads): each case is decided by the
//	                  pipeline's decision (callpipe.Snapshot.Decide, which
//	                  `toolgate explain` and `policy test` make too),
//	                  against the nearest whole workspace above it in the
//	                  same document, and must get the tier's outcome it
//	                  expects, with a reason containing reason_contains.
//	```yaml approval-cases
//	                  the same keys and decision, with the rule that
//	                  approves a call the tier sends to approval shown as
//	                  such; expect is allow, deny,
//	                  approval (a person must approve) or rule:N (approved
//	                  by the Nth rule, without a person).
//
// Any other word is a failure, so a typo cannot skip an example.
const (
	kindWhole    = ""
	kindFragment = "fragment"
	kindCases    = "cases"
	kindRules    = "approval-cases"
)

// example is one fenced YAML block of a document.
type example struct {
	file string
	line int // of the opening fence
	kind string
	text string
}

// TestDocExamplesLoad checks every YAML example of docs/*.md as its fence
// says.
func TestDocExamplesLoad(t *testing.T) {
	docs, err := filepath.Glob("*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md found (err %v)", err)
	}
	total := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		exs, problems := fences(doc, data)
		total += len(exs)
		problems = append(problems, checkExamples(t.TempDir(), exs)...)
		for _, p := range problems {
			t.Error(p)
		}
	}
	if total < 20 {
		t.Errorf("found only %d YAML examples in docs/*.md; is the fence parser broken?", total)
	}
}

// TestDocExamplesRefuse: the check fails for each way an example can be
// wrong, so a passing TestDocExamplesLoad means something.
func TestDocExamplesRefuse(t *testing.T) {
	t.Parallel()
	const ws = "```yaml\nversion: 1\ncommand_packs:\n  - id: p\n    commands:\n      - {id: r, argv: [cat, \"{f}\"], inputs: {type: object, properties: {f: {type: string}}}, effects: read}\nagents:\n  - {id: a, grants: [tool:p:r]}\n```\n"
	const ruled = "```yaml\nversion: 1\ngateway: {approvals: {rules: [{agent: a, capability: tool:p:w, param_constraints: {f: {const: x}}}]}}\ncommand_packs:\n  - id: p\n    commands:\n      - {id: w, argv: [touch, \"{f}\"], inputs: {type: object, properties: {f: {type: string}}}, effects: write}\nagents:\n  - {id: a, grants: [tool:p:w]}\n```\n"
	cases := []struct {
		name, md, want string
	}{
		{"unknown key in a workspace", "```yaml\nversion: 1\nagentz: []\n```\n", "workspace does not load"},
		{"grant naming nothing", "```yaml\nversion: 1\nagents:\n  - {id: a, grants: [tool:nope:x]}\n```\n", "do not compile"},
		{"rule for an undeclared agent", "```yaml\nversion: 1\ngateway: {approvals: {rules: [{agent: b, capability: tool:p:r}]}}\ncommand_packs:\n  - id: p\n    commands: [{id: r, argv: [cat]}]\n```\n", "approval rules do not compile"},
		{"fragment with a wrong type", "```yaml fragment\ngateway: {max_body: lots}\n```\n", "fragment does not load"},
		{"fragment that is a whole workspace", "```yaml fragment\nversion: 1\n```\n", "declares version"},
		{"unknown kind", "```yaml workspace\nversion: 1\n```\n", "unknown example kind"},
		{"unclosed fence", "```yaml\nversion: 1\n", "never closed"},
		{"cases without a workspace", "```yaml cases\n- {name: n, agent: a, tool: p:r, expect: allow}\n```\n", "needs a whole workspace"},
		{"a case decided otherwise", ws + "```yaml cases\n- {name: n, agent: a, tool: p:r, args: {f: x}, expect: deny}\n```\n", "toolgate decides allow"},
		{"a case's reason differs", ws + "```yaml cases\n- {name: n, agent: a, tool: p:x, expect: deny, reason_contains: scopes}\n```\n", "reason containing"},
		{"a case with an unknown key", ws + "```yaml cases\n- {name: n, agent: a, tool: p:r, expect: allow, outcome: allow}\n```\n", "do not decode"},
		{"a rule said to approve that does not", ruled + "```yaml approval-cases\n- {name: n, agent: a, tool: p:w, args: {f: y}, expect: rule:1}\n```\n", "toolgate decides approval"},
		{"a rule case decided without the rules", ruled + "```yaml cases\n- {name: n, agent: a, tool: p:w, args: {f: x}, expect: rule:1}\n```\n", "toolgate decides approval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			exs, problems := fences("x.md", []byte(tc.md))
			problems = append(problems, checkExamples(t.TempDir(), exs)...)
			if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
				t.Errorf("problems %q, want one containing %q", problems, tc.want)
			}
		})
	}
	// And the good workspace with a true case passes.
	exs, problems := fences("x.md", []byte(ws+"```yaml cases\n- {name: n, agent: a, tool: p:r, args: {f: x}, expect: allow}\n```\n```sh\n```yaml inside another block is no example\n```\n"+
		ruled+"```yaml approval-cases\n- {name: n, agent: a, tool: p:w, args: {f: x}, expect: rule:1}\n- {name: m, agent: a, tool: p:w, args: {f: y}, expect: approval}\n```\n"))
	problems = append(problems, checkExamples(t.TempDir(), exs)...)
	if len(problems) > 0 || len(exs) != 4 {
		t.Errorf("a good document: %d examples, problems %q", len(exs), problems)
	}
}

// fences returns the ```yaml blocks of a markdown document. A fence may be
// indented (inside a list item); the block's lines lose that indentation.
// Blocks of other languages are skipped whole.
func fences(file string, data []byte) ([]example, []string) {
	var out []example
	var cur *example
	skipping := false
	indent := ""
	var body strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " ")
		if cur == nil && !skipping {
			info, ok := strings.CutPrefix(trimmed, "```")
			if !ok {
				continue
			}
			lang, rest, _ := strings.Cut(strings.TrimSpace(info), " ")
			indent = line[:len(line)-len(trimmed)]
			if lang != "yaml" && lang != "yml" {
				skipping = true
				continue
			}
			cur = &example{file: file, line: n, kind: strings.TrimSpace(rest)}
			body.Reset()
			continue
		}
		if strings.TrimSpace(trimmed) == "```" {
			if cur != nil {
				cur.text = body.String()
				out = append(out, *cur)
			}
			cur, skipping = nil, false
			continue
		}
		if cur != nil {
			body.WriteString(strings.TrimPrefix(line, indent))
			body.WriteByte('\n')
		}
	}
	if cur != nil {
		return out, []string{fmt.Sprintf("%s:%d: a ```yaml block is never closed", file, cur.line)}
	}
	return out, nil
}

// checkExamples checks one document's examples in order; dir is a fresh
// directory for the workspaces to live in.
func checkExamples(dir string, exs []example) []string {
	var problems []string
	var last *compiled
	for i, ex := range exs {
		name := fmt.Sprintf("%s:%d", ex.file, ex.line)
		switch ex.kind {
		case kindWhole:
			var p []string
			last, p = loadWhole(filepath.Join(dir, fmt.Sprint(i)), name, ex.text)
			problems = append(problems, p...)
		case kindFragment:
			problems = append(problems, loadFragment(name, ex.text)...)
		case kindCases, kindRules:
			if last == nil {
				problems = append(problems, fmt.Sprintf("%s: a cases example needs a whole workspace example that loads above it in %s", name, ex.file))
				continue
			}
			problems = append(problems, decideCases(name, last, ex.kind == kindRules, ex.text)...)
		default:
			problems = append(problems, fmt.Sprintf("%s: unknown example kind %q after ```yaml; write ```yaml (a whole workspace), ```yaml %s, ```yaml %s or ```yaml %s", name, ex.kind, kindFragment, kindCases, kindRules))
		}
	}
	return problems
}

// compiled is a whole workspace as the pipeline decides with it: the
// snapshot callpipe.NewSnapshot builds, as the gateway builds it.
type compiled struct {
	ws   *workspace.Workspace
	snap *callpipe.Snapshot
}

// loadWhole loads a whole workspace from a directory of its own and
// returns its compiled policy and rules (nil when it does not load).
func loadWhole(dir, name, text string) (*compiled, []string) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, []string{err.Error()}
	}
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, []string{err.Error()}
	}
	// Errors name the example's file; say where in the document instead.
	at := func(what string, err error) []string {
		return []string{fmt.Sprintf("%s: the example's %s (+LINE:COL counts within the example):\n%s", name, what, strings.ReplaceAll(err.Error(), path+":", "+"))}
	}
	ws, err := workspace.Load(path)
	if err != nil {
		return nil, at("workspace does not load", err)
	}
	policy, err := grantcheck.Compile(ws)
	if err != nil {
		return nil, at("grants do not compile", err)
	}
	snap, err := callpipe.NewSnapshot(ws, policy)
	if err != nil {
		return nil, at("approval rules do not compile", err)
	}
	return &compiled{ws, snap}, nil
}

// loadFragment loads a top-level part of a workspace, wrapped as one.
func loadFragment(name, text string) []string {
	if strings.HasPrefix(text, "version:") || strings.Contains(text, "\nversion:") {
		return []string{fmt.Sprintf("%s: a fragment declares version:; it is a whole workspace, so write ```yaml", name)}
	}
	if _, err := workspace.Parse(name, []byte("version: 1\n"+text)); err != nil {
		return []string{fmt.Sprintf("%s: the fragment does not load (wrapped after a line version: 1, so +LINE counts from 2 within the example):\n%s", name, strings.ReplaceAll(err.Error(), name+":", "+"))}
	}
	return nil
}

// policyCase is one case of a `toolgate policy test` file, with the keys
// that command reads (cmd/toolgate/policy.go).
type policyCase struct {
	Name           string         `yaml:"name"`
	Agent          string         `yaml:"agent"`
	Tool           string         `yaml:"tool"`
	Args           map[string]any `yaml:"args"`
	Expect         string         `yaml:"expect"`
	ReasonContains string         `yaml:"reason_contains"`
}

// decideCases decides each case against ws; withRules applies its approval
// rules to a call sent to approval, as the pipeline does.
func decideCases(name string, ws *compiled, withRules bool, text string) []string {
	dec := yaml.NewDecoder(strings.NewReader(text))
	dec.KnownFields(true)
	var cases []policyCase
	if err := dec.Decode(&cases); err != nil {
		return []string{fmt.Sprintf("%s: the cases do not decode: %v", name, err)}
	}
	if len(cases) == 0 {
		return []string{fmt.Sprintf("%s: no cases", name)}
	}
	var problems []string
	for _, c := range cases {
		surface, member, ok := strings.Cut(c.Tool, ":")
		if !ok || c.Name == "" || c.Agent == "" || c.Expect == "" {
			problems = append(problems, fmt.Sprintf("%s: case %q needs name, agent, tool (SURFACE:MEMBER) and expect", name, c.Name))
			continue
		}
		args := c.Args
		if args == nil {
			args = map[string]any{}
		}
		// The pipeline's one decision (callpipe.Snapshot.Decide); a cases
		// block shows the tier's outcome, an approval-cases block the rule.
		d := ws.snap.Decide(c.Agent, surface, member, args)
		got := string(d.Outcome)
		if withRules && d.ApprovedBy != "" {
			got = d.ApprovedBy
		}
		if got != c.Expect || !strings.Contains(d.Reason, c.ReasonContains) {
			problems = append(problems, fmt.Sprintf("%s: case %q: the document says %s (reason containing %q), toolgate decides %s at the %s stage: %s",
				name, c.Name, c.Expect, c.ReasonContains, got, d.Stage, d.Reason))
		}
	}
	return problems
}
