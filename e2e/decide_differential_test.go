package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// decideWorkspace has two proxied stdio servers (server-memory, once
// trusting its annotations and once not), a pack, every grant form, param
// constraints, tiers, permission overrides and approval rules. DIR, NODE
// and SCRIPT are replaced.
const decideWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl, fsync: never}
  approvals:
    wait: 10ms
    max_pending: 100000
    rules:
      - agent: writer
        capability: tool:notes:stamp
        param_constraints: {label: {enum: [a]}}
      - agent: writer
        capability: tool:memory:add_observations
mcp_servers:
  - id: memory
    command: [NODE, SCRIPT]
    env: {MEMORY_FILE_PATH: DIR/memory.jsonl}
    trust_annotations: true
    permission: cautious
    permission_overrides: {delete_entities: strict, read_graph: readonly}
    effects: {open_nodes: write}
  - id: mem2
    command: [NODE, SCRIPT]
    env: {MEMORY_FILE_PATH: DIR/memory2.jsonl}
    permission: open
command_packs:
  - id: notes
    permission: cautious
    permission_overrides: {wipe: strict}
    commands:
      - id: say
        description: Says the text.
        argv: [echo, "{text}"]
        inputs: {type: object, properties: {text: {type: string, maxLength: 20}}, required: [text], additionalProperties: false}
        effects: read
      - id: stamp
        description: Stamps a label.
        argv: [echo, stamped, "{label}"]
        inputs: {type: object, properties: {label: {type: string}}, required: [label]}
        effects: write
      - id: wipe
        description: Wipes a label.
        argv: [echo, wiped, "{label}"]
        inputs: {type: object, properties: {label: {type: string}}, required: [label]}
        effects: write
      - id: count
        description: Counts.
        argv: [echo, "{n}"]
        inputs: {type: object, properties: {n: {type: integer}}, required: [n]}
        effects: read
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants: [server:memory, pack:notes]
  - id: writer
    token: {env: WRITER_TOKEN}
    grants:
      - tool:memory:*
      - op: tool:notes:stamp
        param_constraints: {label: {enum: [a, b]}}
      - tool:notes:wipe
      - tool:mem2:search_nodes
  - id: narrow
    token: {env: NARROW_TOKEN}
    grants:
      - op: tool:memory:search_nodes
        param_constraints: {query: {pattern: "[a-z]+"}}
      - server:mem2
      - notes-say
      - op: tool:notes:count
        param_constraints: {n: {maximum: 10}}
`

// decideCase is one generated call.
type decideCase struct {
	agent, surface, tool string
	args                 map[string]any
}

func (c decideCase) String() string {
	b, _ := json.Marshal(c.args)
	return fmt.Sprintf("%s → %s:%s %s", c.agent, c.surface, c.tool, b)
}

// genDecideCases draws n calls from a fixed seed: every agent, every tool
// of every surface (and names that do not exist), arguments valid,
// invalid, at and past their bounds.
func genDecideCases(n int) []decideCase {
	r := rand.New(rand.NewPCG(22, 2026))
	word := func() string {
		const alpha = "abcxyzAB!9 -"
		b := make([]byte, r.IntN(6))
		for i := range b {
			b[i] = alpha[r.IntN(len(alpha))]
		}
		return string(b)
	}
	pick := func(vs ...any) any { return vs[r.IntN(len(vs))] }
	memArgs := map[string]func() map[string]any{
		"search_nodes": func() map[string]any { return map[string]any{"query": pick(word(), word(), 5, nil)} },
		"open_nodes":   func() map[string]any { return map[string]any{"names": pick([]any{word()}, word(), []any{})} },
		"read_graph":   func() map[string]any { return map[string]any{} },
		"create_entities": func() map[string]any {
			return map[string]any{"entities": pick([]any{map[string]any{"name": word(), "entityType": "t", "observations": []any{}}}, "bad")}
		},
		"add_observations": func() map[string]any {
			return map[string]any{"observations": []any{map[string]any{"entityName": word(), "contents": []any{word()}}}}
		},
		"delete_entities":     func() map[string]any { return map[string]any{"entityNames": []any{"zz-" + word()}} },
		"delete_observations": func() map[string]any { return map[string]any{"deletions": []any{}} },
		"delete_relations":    func() map[string]any { return map[string]any{"relations": []any{}} },
		"create_relations":    func() map[string]any { return map[string]any{"relations": []any{}} },
		"search_node":         func() map[string]any { return map[string]any{"query": "a"} }, // a typo: exists nowhere
	}
	packArgs := map[string]func() map[string]any{
		"say":   func() map[string]any { return map[string]any{"text": pick(word(), strings.Repeat("x", 21), 3)} },
		"stamp": func() map[string]any { return map[string]any{"label": pick("a", "b", "c", word())} },
		"wipe":  func() map[string]any { return map[string]any{"label": "a"} },
		"count": func() map[string]any { return map[string]any{"n": pick(1, 10, 11, 2.5, "3")} },
		"nope":  func() map[string]any { return map[string]any{} },
	}
	keys := func(m map[string]func() map[string]any) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		slices.Sort(out)
		return out
	}
	memTools, packTools := keys(memArgs), keys(packArgs)
	agents := []string{"reader", "writer", "narrow"}
	out := make([]decideCase, 0, n)
	for len(out) < n {
		c := decideCase{agent: agents[r.IntN(len(agents))]}
		switch r.IntN(5) {
		case 0, 1:
			c.surface, c.tool = "memory", memTools[r.IntN(len(memTools))]
			c.args = memArgs[c.tool]()
		case 2:
			c.surface, c.tool = "mem2", memTools[r.IntN(len(memTools))]
			c.args = memArgs[c.tool]()
		default:
			c.surface, c.tool = "notes", packTools[r.IntN(len(packTools))]
			c.args = packArgs[c.tool]()
		}
		if r.IntN(10) == 0 {
			c.args["unexpected"] = true
		}
		for k, v := range c.args {
			if v == nil {
				delete(c.args, k)
			}
		}
		out = append(out, c)
	}
	return out
}

// daemonDecision classifies what the running gateway answered a call: a
// DENIED approval pending is approval, any other DENIED is deny, a result
// (even the tool's own error) is allow — the call ran.
func daemonDecision(text string, isErr bool) string {
	switch {
	case isErr && strings.HasPrefix(text, "DENIED: approval pending"):
		return "approval"
	case isErr && strings.HasPrefix(text, "DENIED: "):
		return "deny"
	}
	return "allow"
}

// connectOrRefused opens a session of agent on a surface's endpoint; nil
// when the gateway refuses the agent there (then every call is a deny).
func connectOrRefused(t *testing.T, url, token string) *rawSession {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"decide-e2e","version":"1"}}}`
	req, _ := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil
	}
	s := &rawSession{t: t, url: url, token: token, sid: resp.Header.Get("Mcp-Session-Id")}
	s.post([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return s
}

// explainAll decides each case with `toolgate explain --format json` (and
// extra flags), four at a time: the decision and reason of each, or an
// error text when explain failed or wrote to stderr.
func explainAll(t *testing.T, dir, ws string, cases []decideCase, extra ...string) (decisions, reasons []string) {
	decisions, reasons = make([]string, len(cases)), make([]string, len(cases))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				c := cases[i]
				args, _ := json.Marshal(c.args)
				argv := append([]string{"explain", "-w", ws, "--agent", c.agent, "--tool", c.surface + ":" + c.tool, "--args", string(args), "--format", "json"}, extra...)
				r := toolgate(t, dir, nil, argv...)
				var out struct{ Decision, Reason string }
				if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || strings.Contains(r.stderr, "toolgate explain:") {
					decisions[i] = fmt.Sprintf("error: exit %d %s %s", r.code, r.stdout, r.stderr)
					continue
				}
				decisions[i], reasons[i] = out.Decision, out.Reason
			}
		}()
	}
	for i := range cases {
		next <- i
	}
	close(next)
	wg.Wait()
	return decisions, reasons
}

// TestDecideOfflineEqualsDaemon is the differential test of one decision:
// 1,000 generated (agent, tool, arguments) calls over a workspace with a
// pack and two proxied stdio servers (server-memory), pinned with
// `toolgate pin`; each is decided by `toolgate explain --offline` (the
// servers' tools known only from toolgate.lock) and made against the
// running daemon built from the same source. Every decision must agree.
// A pack command edited after pinning makes the pin stage decide too.
func TestDecideOfflineEqualsDaemon(t *testing.T) {
	t.Parallel()
	node, script := memoryServer(t)
	dir := t.TempDir()
	text := strings.NewReplacer("DIR", dir, "NODE", node, "SCRIPT", script).Replace(decideWorkspace)
	ws := writeFile(t, dir, "toolgate.yaml", text)
	if r := toolgate(t, dir, nil, "pin", "-w", ws); r.code != 0 {
		t.Fatalf("toolgate pin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lock, err := os.ReadFile(filepath.Join(dir, "toolgate.lock"))
	if err != nil || !bytes.Contains(lock, []byte(`"definition": {`)) || !bytes.Contains(lock, []byte(`"readOnlyHint": true`)) {
		t.Fatalf("the lock does not record definitions: %v\n%.2000s", err, lock)
	}
	// Reviewed after pinning: wipe's new description is not its pin.
	writeFile(t, dir, "toolgate.yaml", strings.Replace(text, "Wipes a label.", "Wipes a label. And everything else.", 1))

	env := []string{"READER_TOKEN=tok-reader-0123456789abcdef", "WRITER_TOKEN=tok-writer-0123456789abcdef", "NARROW_TOKEN=tok-narrow-0123456789abcdef"}
	tokens := map[string]string{"reader": "tok-reader-0123456789abcdef", "writer": "tok-writer-0123456789abcdef", "narrow": "tok-narrow-0123456789abcdef"}
	d := startFleetDaemon(t, ws, env)

	cases := genDecideCases(1000)
	// The daemon: one session per agent and surface, calls in order.
	sessions := map[string]*rawSession{}
	refused := map[string]bool{}
	daemon := make([]string, len(cases))
	for i, c := range cases {
		key := c.agent + "/" + c.surface
		s, ok := sessions[key]
		if !ok && !refused[key] {
			s = connectOrRefused(t, d.base+"/mcp/"+c.surface, tokens[c.agent])
			sessions[key], refused[key] = s, s == nil
		}
		if s == nil {
			daemon[i] = "deny"
			continue
		}
		daemon[i] = daemonDecision(s.callText(c.tool, c.args))
	}

	// explain --offline, four at a time; nothing is contacted.
	offline, reasons := explainAll(t, dir, ws, cases, "--offline")
	// Every 50th case again without --offline: the servers are listed
	// live, as serve lists them, and the decision is the same.
	var sample []decideCase
	for i := 0; i < len(cases); i += 50 {
		sample = append(sample, cases[i])
	}
	live, _ := explainAll(t, dir, ws, sample)
	for j, got := range live {
		if want := daemon[j*50]; got != want {
			t.Errorf("case %d %s: daemon %s, explain (live) %s", j*50, sample[j], want, got)
		}
	}

	counts := map[string]int{}
	disagree := 0
	for i, c := range cases {
		counts[daemon[i]]++
		if daemon[i] != offline[i] {
			disagree++
			if disagree <= 20 {
				t.Errorf("case %d %s: daemon %s, explain --offline %s (%s)", i, c, daemon[i], offline[i], reasons[i])
			}
		}
	}
	t.Logf("%d cases: %v; %d disagreements", len(cases), counts, disagree)
	if disagree > 0 {
		t.Fatalf("%d of %d decisions differ", disagree, len(cases))
	}
	// The sample must exercise every outcome, and the stages past the tier.
	for _, o := range []string{"allow", "approval", "deny"} {
		if counts[o] < 50 {
			t.Fatalf("only %d %s decisions: the sample does not exercise it", counts[o], o)
		}
	}
	seen := strings.Join(reasons, "\n")
	for _, want := range []string{"approved by rule:1", "approved by rule:2", "tool definition changed since it was pinned", "is not one of", "does not match the pattern", "arguments do not match the input schema", "unknown tool \"memory:search_node\""} {
		if !strings.Contains(seen, want) {
			t.Errorf("no decision reasons mention %q", want)
		}
	}

	// A pinned server's tool, granted by server:memory and known only
	// from the lock: explain --offline decides it as the daemon does.
	r := toolgate(t, dir, nil, "explain", "--offline", "-w", ws, "--agent", "reader", "--tool", "memory:read_graph", "--format", "json")
	var e struct{ Decision, Grant, Effects string }
	if json.Unmarshal([]byte(r.stdout), &e) != nil || e.Decision != "allow" || e.Grant != "server:memory" || e.Effects != "read" {
		t.Fatalf("explain --offline memory:read_graph: %s %s", r.stdout, r.stderr)
	}
	if got := daemonDecision(sessions["reader/memory"].callText("read_graph", map[string]any{})); got != "allow" {
		t.Fatalf("daemon: read_graph %s", got)
	}
}
