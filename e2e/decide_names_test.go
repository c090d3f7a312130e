package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// decideNamesWorkspace proxies server-memory (NODE, SCRIPT, DIR replaced)
// with a grant and an effects key to be misspelt.
const decideNamesWorkspace = `version: 1
mcp_servers:
  - id: memory
    command: [NODE, SCRIPT]
    env: {MEMORY_FILE_PATH: DIR/memory.jsonl}
    effects: {read_graph: read, search_nodes: read}
agents:
  - id: writer
    token: {env: WRITER_TOKEN}
    grants:
      - tool:memory:search_nodes
      - server:memory
`

// TestDecideCheckNames: against the built binary and a real pinned
// server, `check --offline` refuses a misspelt grant and effects key at
// their file:line:col with a did-you-mean, contacting nothing; without a
// lock it warns that the names cannot be checked; with the right names it
// lists each agent's concrete tools from the lock and warns that the
// server wildcard covers writes.
func TestDecideCheckNames(t *testing.T) {
	t.Parallel()
	node, script := memoryServer(t)
	dir := t.TempDir()
	good := strings.NewReplacer("DIR", dir, "NODE", node, "SCRIPT", script).Replace(decideNamesWorkspace)
	ws := writeFile(t, dir, "toolgate.yaml", good)

	noLock := toolgate(t, dir, nil, "check", "--offline", "-w", ws)
	if noLock.code != 0 || !strings.Contains(noLock.stderr, "no toolgate.lock beside the workspace: the proxied tool names in grants, effects, overrides and approval rules cannot be checked") ||
		!strings.Contains(noLock.stderr, "toolgate pin") {
		t.Fatalf("check --offline without a lock: exit %d\n%s%s", noLock.code, noLock.stdout, noLock.stderr)
	}
	if r := toolgate(t, dir, nil, "pin", "-w", ws); r.code != 0 {
		t.Fatalf("pin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	ok := toolgate(t, dir, nil, "check", "--offline", "-w", ws)
	if ok.code != 0 {
		t.Fatalf("check --offline: exit %d\n%s%s", ok.code, ok.stdout, ok.stderr)
	}
	for _, want := range []string{"memory:create_entities", "memory:open_nodes", "memory:read_graph"} {
		if !strings.Contains(ok.stdout, want) {
			t.Errorf("check --offline does not list %s from the lock:\n%s", want, ok.stdout)
		}
	}
	if !strings.Contains(ok.stderr, `toolgate.yaml:12:9: warning: agent "writer": server:memory covers`) || !strings.Contains(ok.stderr, "memory:create_entities") {
		t.Errorf("no warning that server:memory covers writes:\n%s", ok.stderr)
	}

	typo := strings.Replace(strings.Replace(good, "- tool:memory:search_nodes", "- tool:memory:search_node", 1), "read_graph: read", "read_grahp: read", 1)
	writeFile(t, dir, "toolgate.yaml", strings.Replace(typo, node, "/nonexistent/node", 1))
	// The server's command is made unrunnable: --offline must not need it.
	bad := toolgate(t, dir, nil, "check", "--offline", "-w", ws)
	if bad.code == 0 {
		t.Fatalf("check --offline accepted the typos:\n%s%s", bad.stdout, bad.stderr)
	}
	for _, want := range []string{
		`toolgate.yaml:6:15: server "memory" effects names tool "read_grahp", which server "memory" does not list (toolgate.lock) (did you mean "read_graph"?)`,
		`toolgate.yaml:11:9: agent "writer" grant "tool:memory:search_node" names tool "search_node", which server "memory" does not list (toolgate.lock) (did you mean "search_nodes"?)`,
	} {
		if !strings.Contains(bad.stderr, filepath.Join(dir, want)) && !strings.Contains(bad.stderr, want) {
			t.Errorf("check --offline lacks\n  %s\nin\n%s", want, bad.stderr)
		}
	}
	// Live, the unreachable server is named and the names are still
	// checked against the lock.
	live := toolgate(t, dir, nil, "check", "-w", ws)
	if live.code == 0 || !strings.Contains(live.stderr, `server "memory": not reached`) || !strings.Contains(live.stderr, `(did you mean "search_nodes"?)`) {
		t.Fatalf("check (live) with the server down: exit %d\n%s%s", live.code, live.stdout, live.stderr)
	}
}
