package gateway

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestRestartOnlyServers: a server's tiers, effects and scopes reload
// live; how it is reached, or a server added, waits for a restart.
func TestRestartOnlyServers(t *testing.T) {
	t.Parallel()
	base := `version: 1
mcp_servers:
  - id: mem
    command: [node, server.js]
    permission: cautious
agents:
  - {id: a, grants: ["server:mem"]}
`
	cases := []struct {
		name, from, to string
		want           string
	}{
		{"tier", "permission: cautious", "permission: strict", ""},
		{"effects", "permission: cautious", "permission: cautious\n    effects: {read_graph: read}", ""},
		{"command", "command: [node, server.js]", "command: [node, other.js]", "mcp_servers.mem (transport)"},
		{"env", "permission: cautious", "permission: cautious\n    env: {X: y}", "mcp_servers.mem (transport)"},
		{"added", "agents:", "  - {id: two, url: \"https://two.example/mcp\"}\nagents:", "mcp_servers.two (added)"},
		{"credentials", "mcp_servers:", "credentials:\n  k: {env: K}\nmcp_servers:", "credentials"},
	}
	load := func(t *testing.T, y string) *workspace.Workspace {
		t.Helper()
		ws, err := workspace.Parse("toolgate.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := strings.Join(restartOnly(load(t, base), load(t, strings.Replace(base, c.from, c.to, 1))), ",")
			if got != c.want {
				t.Fatalf("restartOnly = %q, want %q", got, c.want)
			}
		})
	}
}

// TestSameDecl: declarations compare by what they say, not where they are
// written.
func TestSameDecl(t *testing.T) {
	t.Parallel()
	load := func(y string) *workspace.Workspace {
		ws, err := workspace.Parse("toolgate.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	a := load("version: 1\nagents:\n  - {id: a, grants: [\"tool:x:y\"]}\n")
	moved := load("version: 1\n\n\n# moved\nagents:\n  - {id: a, grants: [\"tool:x:y\"]}\n")
	other := load("version: 1\nagents:\n  - {id: a, grants: [\"tool:x:z\"]}\n")
	if !sameDecl(a.Agents, moved.Agents) {
		t.Error("moving a declaration changed it")
	}
	if sameDecl(a.Agents, other.Agents) {
		t.Error("a changed grant compares equal")
	}
	if ch := describeChanges(a, other); strings.Join(ch, ",") != "agent a changed" {
		t.Errorf("describeChanges = %v", ch)
	}
	if !sameCredentials(map[string]string{"k": "v"}, map[string]string{"k": "v"}) || sameCredentials(map[string]string{"k": "v"}, map[string]string{"k": "w"}) || sameCredentials(nil, map[string]string{"k": ""}) {
		t.Error("sameCredentials")
	}
	if short("0123456789abcdef") != "0123456789ab" || short("abc") != "abc" {
		t.Error("short")
	}
}
