package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

const decideWorkspace = `version: 1
gateway:
  approvals:
    rules:
      - agent: writer
        capability: tool:memory:create_entities
mcp_servers:
  - id: memory
    command: [node, server.js]
    trust_annotations: true
command_packs:
  - id: notes
    commands:
      - id: say
        description: Says.
        argv: [echo, "{text}"]
        inputs: {type: object, properties: {text: {type: string}}, required: [text]}
        effects: read
agents:
  - id: reader
    token: {env: R}
    grants: [server:memory, pack:notes]
  - id: writer
    token: {env: W}
    grants: [tool:memory:create_entities]
`

// memoryListing stands in for server-memory's live listing.
func memoryListing(_ context.Context, _ *workspace.Workspace) (map[string][]pin.Tool, map[string]error) {
	return map[string][]pin.Tool{"memory": pinsOf([]json.RawMessage{
		json.RawMessage(`{"name":"read_graph","description":"Reads the graph.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`),
		json.RawMessage(`{"name":"create_entities","description":"Creates.","inputSchema":{"type":"object","properties":{"entities":{"type":"array"}},"required":["entities"]},"annotations":{"readOnlyHint":false}}`),
	})}, nil
}

func downListing(_ context.Context, ws *workspace.Workspace) (map[string][]pin.Tool, map[string]error) {
	return nil, map[string]error{"memory": errors.New("connection refused")}
}

// runDecideCLI runs the CLI with lister standing in for the servers.
func runDecideCLI(lister serverLister, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	c := &cli{stdout: &out, stderr: &errb, getenv: func(string) string { return "" }, log: slog.New(slog.DiscardHandler), listServerTools: lister}
	code := c.main(context.Background(), args)
	return code, out.String(), errb.String()
}

// TestDecideOfflineFromLock: the servers' tools come from the lock with
// --offline (a server: grant covers them, trust_annotations and approval
// rules apply), from the live listing without it (an unreachable server
// is named, and its server: grant covers nothing), and check and policy
// test decide alike.
func TestDecideOfflineFromLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(decideWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runDecideCLI(memoryListing, "pin", "-w", ws); code != exitOK {
		t.Fatalf("pin: %d %s %s", code, out, errOut)
	}
	explain := func(lister serverLister, offline bool, agent, tool, args string) (explainJSON, string) {
		t.Helper()
		argv := []string{"explain", "-w", ws, "--agent", agent, "--tool", tool, "--args", args, "--format", "json"}
		if offline {
			argv = append(argv, "--offline")
		}
		code, out, errOut := runDecideCLI(lister, argv...)
		var e explainJSON
		if code != exitOK || json.Unmarshal([]byte(out), &e) != nil {
			t.Fatalf("explain %v: %d %s %s", argv, code, out, errOut)
		}
		return e, errOut
	}
	for _, tc := range []struct {
		agent, tool, args    string
		decision, approvedBy string
	}{
		{"reader", "memory:read_graph", `{}`, "allow", ""},
		{"reader", "memory:create_entities", `{"entities":[]}`, "approval", ""},
		{"reader", "memory:create_entities", `{}`, "deny", ""}, // the pinned schema requires entities
		{"writer", "memory:create_entities", `{"entities":[]}`, "allow", "rule:1"},
		{"writer", "memory:read_graph", `{}`, "deny", ""},
		{"reader", "notes:say", `{"text":"hi"}`, "allow", ""},
	} {
		for _, offline := range []bool{true, false} {
			lister := serverLister(memoryListing)
			if offline {
				lister = func(context.Context, *workspace.Workspace) (map[string][]pin.Tool, map[string]error) {
					t.Fatal("--offline contacted a server")
					return nil, nil
				}
			}
			e, errOut := explain(lister, offline, tc.agent, tc.tool, tc.args)
			if string(e.Decision) != tc.decision || e.ApprovedBy != tc.approvedBy || errOut != "" {
				t.Errorf("offline=%v %s %s %s: %s by %q (%s) %s", offline, tc.agent, tc.tool, tc.args, e.Decision, e.ApprovedBy, e.Reason, errOut)
			}
		}
	}
	e, errOut := explain(downListing, false, "reader", "memory:read_graph", `{}`)
	if e.Decision != "deny" || !strings.Contains(errOut, `server "memory": not reached: connection refused`) {
		t.Errorf("server down: %s (%s), stderr %q", e.Decision, e.Reason, errOut)
	}

	cases := filepath.Join(dir, "cases.yaml")
	os.WriteFile(cases, []byte(`- {name: read, agent: reader, tool: memory:read_graph, expect: allow}
- {name: ruled, agent: writer, tool: memory:create_entities, args: {entities: []}, expect: allow, reason_contains: approved by rule:1}
`), 0o644)
	if code, out, errOut := runDecideCLI(nil, "policy", "test", "--offline", "-w", ws, cases); code != exitOK {
		t.Errorf("policy test --offline: %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(cases, []byte(`- {name: typo, agent: reader, tool: memory:read_grahp, expect: deny}
`), 0o644)
	if code, _, errOut := runDecideCLI(nil, "policy", "test", "--offline", "-w", ws, cases); code != exitFail ||
		!strings.Contains(errOut, cases+`:1:37: case "typo": tool "memory:read_grahp": "memory" has no tool "read_grahp" (did you mean "read_graph"?)`) {
		t.Errorf("a case naming no tool: %d %s", code, errOut)
	}

	code, out, errOut := runDecideCLI(nil, "check", "--offline", "-w", ws)
	if code != exitOK || !strings.Contains(out, "memory:create_entities  write  cautious  approval  via server:memory") ||
		!strings.Contains(errOut, `agent "reader": server:memory covers 1 write(s): memory:create_entities`) ||
		!strings.Contains(out, "memory:create_entities  write  cautious  approval  via tool:memory:create_entities; rule:1 of approvals.rules may approve it without a human") {
		t.Errorf("check --offline: %d\n%s%s", code, out, errOut)
	}
}

// TestDecideLockAttacks: a lock whose definition was edited by hand (the
// digest left as it was) is refused at its position, never decided from;
// a lock of the older format is read, and the offline commands say the
// definitions are missing and how to record them.
func TestDecideLockAttacks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	os.WriteFile(ws, []byte(decideWorkspace), 0o644)
	if code, _, errOut := runDecideCLI(memoryListing, "pin", "-w", ws); code != exitOK {
		t.Fatal(errOut)
	}
	lockPath := filepath.Join(dir, pin.FileName)
	lock, _ := os.ReadFile(lockPath)
	// Make create_entities look like a read, keeping its digest.
	tampered := bytes.Replace(lock, []byte(`"readOnlyHint": false`), []byte(`"readOnlyHint": true`), 1)
	if bytes.Equal(tampered, lock) {
		t.Fatal("nothing to tamper with")
	}
	os.WriteFile(lockPath, tampered, 0o644)
	code, _, errOut := runDecideCLI(nil, "explain", "--offline", "-w", ws, "--agent", "reader", "--tool", "memory:create_entities", "--args", `{"entities":[]}`)
	if code != exitFail || !strings.Contains(errOut, `surface "memory" tool "create_entities": the definition does not have the recorded digest`) || !strings.Contains(errOut, "toolgate pin --update") {
		t.Fatalf("tampered lock: %d %s", code, errOut)
	}

	old := `{"version":1,"surfaces":{"memory":{"read_graph":"sha256:` + strings.Repeat("a", 64) + `"}}}`
	os.WriteFile(lockPath, []byte(old), 0o644)
	code, out, errOut := runDecideCLI(nil, "explain", "--offline", "-w", ws, "--agent", "reader", "--tool", "memory:read_graph")
	if code != exitOK || !strings.Contains(out, "decision: deny") || !strings.Contains(errOut, "records only digests for it (an older format): run `toolgate pin --update`") {
		t.Fatalf("version 1 lock: %d %s %s", code, out, errOut)
	}
}
