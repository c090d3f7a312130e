package main

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// runPolicy dispatches `toolgate policy <subcommand>`; today that is
// `test`, which checks golden decision cases so a grant change that alters
// a decision fails CI instead of surprising an operator.
func runPolicy(ctx context.Context, c *cli, args []string) int {
	const usage = "Usage: toolgate policy test [-w FILE] [-v] [--offline] CASES.yaml\n\nRuns golden decision cases against a workspace, decided as the gateway decides\n(--offline: the servers' tools from toolgate.lock, nothing contacted).\n"
	if len(args) == 0 {
		fmt.Fprint(c.stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "test":
		return runPolicyTest(ctx, c, args[1:])
	case "-h", "--help", "help":
		fmt.Fprint(c.stderr, usage)
		return exitOK
	}
	fmt.Fprintf(c.stderr, "toolgate policy: unknown subcommand %q\n%s", args[0], usage)
	return exitUsage
}

func runPolicyTest(ctx context.Context, c *cli, args []string) int {
	fs := c.flagSet("policy test", "policy test [-w FILE] [-v] [--offline] CASES.yaml")
	wsFlag := fs.StringP("workspace", "w", "", "workspace file (default $TOOLGATE_WORKSPACE or ./toolgate.yaml)")
	verbose := fs.BoolP("verbose", "v", false, "also list the cases that pass")
	offline := fs.Bool("offline", false, "contact no server: take the proxied servers' tools from toolgate.lock")
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		fmt.Fprintf(c.stderr, "toolgate policy test: give exactly one cases file, for example toolgate policy test -w toolgate.yaml policy-cases.yaml\n")
		return exitUsage
	}
	cases, err := loadPolicyCases(fs.Arg(0))
	if err != nil {
		printLoadError(c, err)
		return exitFail
	}
	dec, ok := c.loadDecider(ctx, "policy test", c.workspacePath(*wsFlag), *offline)
	if !ok {
		return exitFail
	}
	if errs := dec.checkCaseTools(cases); len(errs) > 0 {
		printLoadError(c, errs.Err())
		return exitFail
	}
	failed := 0
	for _, pc := range cases {
		v := dec.snap.Decide(pc.Agent, pc.surface, pc.member, pc.Args)
		d := v.Decision
		d.Outcome = v.Final()
		if v.ApprovedBy != "" {
			d.Reason += "; approved by " + v.ApprovedBy
		}
		if d.Outcome == pc.Expect && strings.Contains(d.Reason, pc.ReasonContains) {
			if *verbose {
				fmt.Fprintf(c.stdout, "ok    %s: %s\n", pc.Name, d.Outcome)
			}
			continue
		}
		failed++
		expected := string(pc.Expect)
		if pc.ReasonContains != "" {
			expected += fmt.Sprintf(", reason containing %q", pc.ReasonContains)
		}
		fmt.Fprintf(c.stdout, "FAIL  %s (%s)\n", pc.Name, pc.pos)
		fmt.Fprintf(c.stdout, "      call:     agent %s → %s:%s\n", pc.Agent, pc.surface, pc.member)
		fmt.Fprintf(c.stdout, "      expected: %s\n", expected)
		fmt.Fprintf(c.stdout, "      got:      %s (at the %s stage)\n", d.Outcome, d.Stage)
		fmt.Fprintf(c.stdout, "      reason:   %s\n", d.Reason)
	}
	fmt.Fprintf(c.stdout, "%d passed, %d failed\n", len(cases)-failed, failed)
	if failed > 0 {
		return exitFail
	}
	return exitOK
}

// checkCaseTools refuses a case naming a tool that exists neither in a
// pack nor in toolgate.lock, at the case's tool: with a did-you-mean; a
// case about a typo would otherwise pass for the wrong reason. A case
// that means it — expect: deny with reason_contains: unknown tool — is
// kept. A server the lock does not pin is not checked (check warns of it).
func (d *decider) checkCaseTools(cases []*policyCase) workspace.ErrorList {
	var errs workspace.ErrorList
	packsByID := map[string]*workspace.CommandPack{}
	for _, p := range d.ws.CommandPacks {
		packsByID[p.ID] = p
	}
	locked := d.lockedNames()
	for _, pc := range cases {
		var names []string
		if p, ok := packsByID[pc.surface]; ok {
			for _, c := range p.Commands {
				names = append(names, c.ID)
			}
		} else if n, ok := locked[pc.surface]; ok {
			names = n
		} else {
			continue
		}
		deliberate := pc.Expect == grantcheck.Deny && strings.Contains(pc.ReasonContains, "unknown tool")
		if !slices.Contains(names, pc.member) && !deliberate {
			errs = append(errs, workspace.Errorf(pc.toolPos, "case %q: tool %q: %q has no tool %q%s; name a tool that exists (pack commands, or the server's tools in toolgate.lock)",
				pc.Name, pc.Tool, pc.surface, pc.member, grantcheck.Suggest(pc.member, names)))
		}
	}
	return errs
}

// policyCase is one golden decision.
type policyCase struct {
	Name           string
	Agent          string
	Tool           string
	Args           map[string]any
	Expect         grantcheck.Outcome
	ReasonContains string

	pos, toolPos    workspace.Pos
	surface, member string
}

// yamlErrorLineRE reads a yaml.v3 message, compiled when first needed.
var yamlErrorLineRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

var policyCaseKeys = []string{"agent", "args", "expect", "name", "reason_contains", "tool"}

// loadPolicyCases reads a cases file strictly: a YAML list of cases, where
// an unknown or repeated key, a missing field, a bad tool or expectation is
// an error at its FILE:LINE:COL. Every problem is reported at once.
func loadPolicyCases(path string) ([]*policyCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read cases: %w", err)
	}
	var errs workspace.ErrorList
	at := func(n *yaml.Node) workspace.Pos { return workspace.Pos{File: path, Line: n.Line, Col: n.Column} }
	errorf := func(n *yaml.Node, format string, a ...any) {
		errs = append(errs, workspace.Errorf(at(n), format, a...))
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlErrorLineRE().FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		return nil, workspace.ErrorList{workspace.Errorf(workspace.Pos{File: path, Line: line, Col: 1}, "YAML syntax: %s", msg)}
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.SequenceNode {
		return nil, workspace.ErrorList{workspace.Errorf(workspace.Pos{File: path, Line: 1, Col: 1},
			"a cases file is a YAML list of cases: - {name, agent, tool, args, expect, reason_contains}")}
	}
	var cases []*policyCase
	names := map[string]workspace.Pos{}
	for _, item := range doc.Content[0].Content {
		item = resolveYAMLAlias(item)
		if item.Kind != yaml.MappingNode {
			errorf(item, "a case must be a mapping with keys %s", strings.Join(policyCaseKeys, ", "))
			continue
		}
		pc := &policyCase{pos: at(item)}
		seen := map[string]bool{}
		for i := 0; i+1 < len(item.Content); i += 2 {
			k, v := item.Content[i], resolveYAMLAlias(item.Content[i+1])
			if seen[k.Value] {
				errorf(k, "key %q is given twice in this case; keep one", k.Value)
				continue
			}
			seen[k.Value] = true
			str := func() string {
				if v.Kind != yaml.ScalarNode {
					errorf(v, "%s must be a single value", k.Value)
					return ""
				}
				return v.Value
			}
			switch k.Value {
			case "name":
				pc.Name = str()
			case "agent":
				pc.Agent = str()
			case "tool":
				pc.Tool, pc.toolPos = str(), at(v)
				if pc.Tool != "" {
					var err error
					if pc.surface, pc.member, err = parseToolRef(pc.Tool); err != nil {
						errorf(v, "tool: %v", err)
					}
				}
			case "expect":
				pc.Expect = grantcheck.Outcome(str())
				if !slices.Contains([]grantcheck.Outcome{grantcheck.Allow, grantcheck.Approval, grantcheck.Deny}, pc.Expect) && v.Kind == yaml.ScalarNode {
					errorf(v, "expect %q: use allow, approval or deny", v.Value)
				}
			case "reason_contains":
				pc.ReasonContains = str()
			case "args":
				if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
					continue
				}
				if v.Kind != yaml.MappingNode {
					errorf(v, "args must be a mapping of argument names to values, for example {file: data.json}")
					continue
				}
				val, err := yamlToJSON(v)
				if err != nil {
					errorf(v, "args: %v", err)
					continue
				}
				pc.Args = val.(map[string]any)
			default:
				errorf(k, "unknown key %q in a case; valid keys are: %s", k.Value, strings.Join(policyCaseKeys, ", "))
			}
		}
		for _, req := range []struct{ key, val string }{{"name", pc.Name}, {"agent", pc.Agent}, {"tool", pc.Tool}, {"expect", string(pc.Expect)}} {
			if req.val == "" {
				errorf(item, "case needs a non-empty %s:", req.key)
			}
		}
		if prev, dup := names[pc.Name]; dup && pc.Name != "" {
			errorf(item, "case name %q is used twice (first at %s); names must be unique", pc.Name, prev)
		}
		names[pc.Name] = pc.pos
		cases = append(cases, pc)
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return cases, nil
}

func resolveYAMLAlias(n *yaml.Node) *yaml.Node {
	for depth := 0; n != nil && n.Kind == yaml.AliasNode && depth < 100; depth++ {
		n = n.Alias
	}
	return n
}

// yamlToJSON turns a YAML value into what a JSON decoder would produce
// (numbers as float64), so a case decides exactly as a real call would.
func yamlToJSON(n *yaml.Node) (any, error) {
	return yamlToJSONDepth(n, 0)
}

func yamlToJSONDepth(n *yaml.Node, depth int) (any, error) {
	if depth > 64 {
		return nil, fmt.Errorf("nested too deeply")
	}
	n = resolveYAMLAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q is given twice", k.Line, k.Value)
			}
			v, err := yamlToJSONDepth(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := yamlToJSONDepth(item, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, nil
		case "!!bool":
			return strconv.ParseBool(n.Value)
		case "!!int", "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, fmt.Errorf("line %d: %q is not a number JSON can hold", n.Line, n.Value)
			}
			return f, nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML value", n.Line)
}
