package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/internal/syncbuf"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// namesWorkspace proxies a server (never contacted by these tests) whose
// tools the lock pins as read_graph and search_nodes; GRANT is the
// agent's grant, EFFECT an effects key.
const namesWorkspace = `version: 1
mcp_servers:
  - id: memory
    url: http://127.0.0.1:1/mcp
    effects: {EFFECT: read}
  - id: other
    url: http://127.0.0.1:1/other
agents:
  - id: a
    grants:
      - GRANT
      - tool:other:anything
`

var namesTools = map[string][]json.RawMessage{"memory": {
	json.RawMessage(`{"name":"read_graph","description":"Reads the graph.","inputSchema":{"type":"object"}}`),
	json.RawMessage(`{"name":"search_nodes","description":"Searches.","inputSchema":{"type":"object"}}`),
}}

// writeNames writes the names workspace into dir with grant and effect.
func writeNames(t *testing.T, path, grant, effect string) {
	t.Helper()
	writeAtomically(t, path, strings.NewReplacer("GRANT", grant, "EFFECT", effect).Replace(namesWorkspace))
}

// lockedNamesDir is a directory holding a good names workspace and the
// lock pinning memory's tools (server other not pinned).
func lockedNamesDir(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toolgate.yaml")
	writeNames(t, path, "tool:memory:read_graph", "read_graph")
	pinWorkspace(t, path, namesTools)
	return path
}

// TestCheckLockedNames: a misspelt grant or effects key of a pinned
// server is refused at its line:column with the did-you-mean; a server
// the lock does not pin, and every server without a lock, is not checked
// (and said so); names a server lists now count when the caller adds them.
func TestCheckLockedNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := lockedNamesDir(t)
	good, err := CheckLocked(ctx, path, LoadOptions{})
	if err != nil || good.Lock == nil || good.Policy == nil {
		t.Fatalf("good file: %+v %v", good, err)
	}
	if w := NameWarnings(good.Workspace, good.Lock); len(w) != 1 || !strings.Contains(w[0].Msg, `server "other" is not in toolgate.lock`) {
		t.Errorf("warnings %v", w)
	}

	writeNames(t, path, "tool:memory:read_grahp", "search_node")
	_, err = CheckLocked(ctx, path, LoadOptions{})
	list := workspace.AsList(err)
	if len(list) != 2 {
		t.Fatalf("want 2 problems, got %v", err)
	}
	for i, want := range []string{
		`toolgate.yaml:5:15: server "memory" effects names tool "search_node", which server "memory" does not list (toolgate.lock) (did you mean "search_nodes"?)`,
		`toolgate.yaml:11:9: agent "a" grant "tool:memory:read_grahp" names tool "read_grahp", which server "memory" does not list (toolgate.lock) (did you mean "read_graph"?)`,
	} {
		if got := list[i].Error(); !strings.HasPrefix(got, filepath.Dir(path)+"/"+want) {
			t.Errorf("problem %d:\n got %s\nwant %s/%s…", i, got, filepath.Dir(path), want)
		}
	}

	// Names the server lists now (check, live) are not typos.
	listed := func(*workspace.Workspace, *grantcheck.Policy, *pin.Lock) (map[string][]string, error) {
		return map[string][]string{"memory": {"read_grahp", "search_node"}}, nil
	}
	if _, err := CheckLocked(ctx, path, LoadOptions{Listed: listed}); err != nil {
		t.Errorf("listed names refused: %v", err)
	}
	// The lock the caller gives is the one checked against.
	if _, err := CheckLocked(ctx, path, LoadOptions{Lock: func(*workspace.Workspace) (*pin.Lock, error) { return nil, nil }}); err != nil {
		t.Errorf("no lock given, yet refused: %v", err)
	}
	// Without a lock nothing is checked, and every server is named.
	if err := os.Remove(pin.PathFor(path)); err != nil {
		t.Fatal(err)
	}
	loaded, err := CheckLocked(ctx, path, LoadOptions{})
	if err != nil || loaded.Lock != nil {
		t.Fatalf("no lock: %+v %v", loaded, err)
	}
	if got := uncheckedServers(loaded.Workspace, nil); strings.Join(got, ",") != "memory,other" {
		t.Errorf("unchecked %v", got)
	}
	// A lock that does not parse is an error, as at start.
	if err := os.WriteFile(pin.PathFor(path), []byte("{not a lock"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := CheckLocked(ctx, path, LoadOptions{}); err == nil || !strings.Contains(err.Error(), "toolgate pin --update") {
		t.Errorf("bad lock: %v", err)
	}
}

// TestServeNames: Open refuses a misspelt name as check does; a reload
// with one is refused (status, audit) and the revision in force stays;
// the fixed file reloads. A new lock dropping a name the workspace in
// force uses applies, and the name is logged.
func TestServeNames(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := lockedNamesDir(t)
	writeNames(t, path, "tool:memory:read_grahp", "read_graph")
	if _, err := Open(ctx, path, Options{}); err == nil || !strings.Contains(err.Error(), `toolgate.yaml:11:9: agent "a" grant "tool:memory:read_grahp"`) ||
		!strings.Contains(err.Error(), `(did you mean "read_graph"?)`) {
		t.Fatalf("Open with a misspelt grant: %v", err)
	}

	writeNames(t, path, "tool:memory:read_graph", "read_graph")
	var logs syncbuf.Buffer
	g, err := Open(ctx, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !strings.Contains(logs.String(), "servers=[other]") {
		t.Errorf("no warning naming the unchecked server:\n%s", logs.String())
	}
	inForce := g.Workspace().Revision

	writeNames(t, path, "tool:memory:read_graph", "read_grahp")
	err = g.Reload(ctx, ReloadSignal)
	if err == nil || !strings.Contains(err.Error(), `toolgate.yaml:5:15: server "memory" effects names tool "read_grahp"`) {
		t.Fatalf("reload with a misspelt effects key: %v", err)
	}
	st := g.Status().Reload
	if g.Workspace().Revision != inForce || st.Revision != inForce || !strings.Contains(st.Error, `(did you mean "read_graph"?)`) || st.RefusedRevision == "" {
		t.Fatalf("after the refused reload: in force %s, status %+v", g.Workspace().Revision, st)
	}
	if evs := reloadEvents(t, g); len(evs) == 0 || evs[len(evs)-1].Decision != DecisionReloadRefused {
		t.Fatalf("refusal not audited: %+v", evs)
	}

	writeNames(t, path, "tool:memory:search_nodes", "read_graph")
	if err := g.Reload(ctx, ReloadSignal); err != nil {
		t.Fatalf("fixed file: %v", err)
	}
	if st := g.Status().Reload; st.Error != "" || st.Revision == inForce || g.Workspace().Revision != st.Revision {
		t.Fatalf("after the fixed reload: %+v", st)
	}

	// `pin --update` after the server dropped search_nodes: the new lock
	// applies, and the grant it no longer lists is named.
	pinWorkspace(t, path, map[string][]json.RawMessage{"memory": namesTools["memory"][:1]})
	g.checkLock(true)
	if _, ok := g.rev.Load().snap.Lock.Pinned("memory", "search_nodes"); ok {
		t.Error("the new lock is not in force")
	}
	if !strings.Contains(logs.String(), "the workspace in force names a tool the new toolgate.lock does not list") || !strings.Contains(logs.String(), "search_nodes") {
		t.Errorf("no log naming the grant the new lock drops:\n%s", logs.String())
	}
	// The next reload of that file is refused against the lock in force.
	writeNames(t, path, "tool:memory:search_nodes", "read_graph")
	if err := g.Reload(ctx, ReloadSignal); err == nil || !strings.Contains(err.Error(), `"search_nodes", which server "memory" does not list`) {
		t.Errorf("reload against the new lock: %v", err)
	}
}
