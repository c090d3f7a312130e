package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const concurrentAuditWorkspace = `version: 1
gateway:
  audit: {path: shared-audit.jsonl}
command_packs:
  - id: echo
    permission: open
    commands:
      - id: say
        argv: [ARGVECHO, "{n}"]
        inputs: {type: object, properties: {n: {type: string}}, required: [n]}
        effects: read
agents:
  - {id: a1, token: {env: A1_TOKEN}, grants: [pack:echo]}
  - {id: a2, token: {env: A2_TOKEN}, grants: [pack:echo]}
  - {id: a3, token: {env: A3_TOKEN}, grants: [pack:echo]}
  - {id: a4, token: {env: A4_TOKEN}, grants: [pack:echo]}
`

// TestAuditFourInstancesOneChain runs four per-agent instances (separate
// `toolgate serve --agent` processes) appending 500 calls each to one audit
// file at the same time: 2,000 events, one valid chain, none lost.
func TestAuditFourInstancesOneChain(t *testing.T) {
	t.Parallel()
	const perAgent = 500
	agents := []string{"a1", "a2", "a3", "a4"}
	dir := t.TempDir()
	ws := writeFile(t, dir, "toolgate.yaml", strings.ReplaceAll(concurrentAuditWorkspace, "ARGVECHO", argvEcho))

	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(agents))
	for _, a := range agents {
		tok := a + "-secret-token-0123456789"
		d := startDaemon(t, []string{strings.ToUpper(a) + "_TOKEN=" + tok}, "-w", ws, "--agent", a)
		cl := mcpHTTP(t, d.base+"/mcp/echo", tok)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perAgent {
				n := fmt.Sprintf("%s-%d", a, i)
				text, isErr, _, err := call(t, cl, "say", map[string]any{"n": n})
				if err != nil || isErr || strings.TrimSpace(text) != `["`+n+`"]` {
					errs <- fmt.Errorf("%s call %d: %q isError %v err %v", a, i, text, isErr, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%d calls through %d processes in %s", perAgent*len(agents), len(agents), time.Since(start).Round(time.Millisecond))

	path := filepath.Join(dir, "shared-audit.jsonl")
	r := toolgate(t, dir, nil, "audit", "verify", path)
	// Write-ahead: every call is a decision event and an outcome event.
	if want := fmt.Sprintf("ok: %d events, chain intact", 2*perAgent*len(agents)); r.code != 0 || !strings.HasPrefix(r.stdout, want) {
		t.Fatalf("audit verify: exit %d\n%s%s\nwant %q", r.code, r.stdout, r.stderr, want)
	}
	per := map[string]int{}
	seen := map[string]bool{}
	for i, ev := range auditEvents(t, path) {
		if ev.Seq != int64(i+1) {
			t.Fatalf("line %d has seq %d", i+1, ev.Seq)
		}
		per[ev.Agent]++
		if len(ev.Argv) == 2 {
			seen[ev.Argv[1]] = true
		}
	}
	for _, a := range agents {
		if per[a] != 2*perAgent {
			t.Errorf("agent %s: %d events, want %d (a decision and an outcome per call)", a, per[a], 2*perAgent)
		}
	}
	if len(seen) != perAgent*len(agents) {
		t.Errorf("%d distinct calls recorded, want %d", len(seen), perAgent*len(agents))
	}
}
