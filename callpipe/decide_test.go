package callpipe

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

const scopedPipelineWorkspace = `version: 1
command_packs:
  - id: notes
    permission: open
    commands:
      - {id: read, argv: [echo, r], effects: read, scopes: [notes:read]}
      - {id: write, argv: [echo, w], effects: write, scopes: [notes:write]}
agents:
  - id: bot
    scopes: [notes:read, notes:write]
    grants: [tool:notes:read, tool:notes:write]
`

// ownExec claims one tool of its own ("status") and refuses it for the
// job id "theirs".
type ownExec struct{ *fakeExec }

func (x ownExec) DecideOwn(_ context.Context, agent string, call *Call) (grantcheck.Decision, bool) {
	if call.Name != "status" {
		return grantcheck.Decision{}, false
	}
	if id, _ := call.Args["job_id"].(string); id == "theirs" {
		return grantcheck.Decision{Outcome: grantcheck.Deny, Stage: grantcheck.StageConstraints, Reason: "no such job of " + agent}, true
	}
	return grantcheck.Decision{Outcome: grantcheck.Allow, Stage: grantcheck.StageTier, Reason: "own tool"}, true
}

// TestDecideStage: a call made with an access token may use only the
// scopes the token grants (as many as the agent declares, no more); an
// executor's own tools are decided by it and then run and audited like
// any call.
func TestDecideStage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, scopedPipelineWorkspace, time.Second, nil)
	x := ownExec{&fakeExec{t: t, auditPath: h.auditPath}}
	tests := []struct {
		name   string
		req    Request
		params string
		want   string // "" allowed
	}{
		{"no token: declared scopes", Request{}, `{"name":"write","arguments":{}}`, ""},
		{"token grants read: read", Request{TokenScoped: true, TokenScopes: []string{"notes:read"}}, `{"name":"read","arguments":{}}`, ""},
		{"token grants read: write refused", Request{TokenScoped: true, TokenScopes: []string{"notes:read"}}, `{"name":"write","arguments":{}}`,
			"DENIED: missing scopes: notes:write (the tool requires notes:write; the access token grants notes:read)"},
		{"token without scopes", Request{TokenScoped: true}, `{"name":"read","arguments":{}}`, "DENIED: missing scopes: notes:read"},
		{"own tool", Request{}, `{"name":"status","arguments":{}}`, ""},
		{"own tool refused", Request{}, `{"name":"status","arguments":{"job_id":"theirs"}}`, "DENIED: no such job of bot"},
	}
	for _, tt := range tests {
		req := tt.req
		req.Agent, req.Provider, req.Surface, req.Exec, req.Call = "bot", Command, "notes", x, mustCall(t, tt.params)
		before := len(readEvents(t, h.auditPath))
		text, isErr := resultText(t, h.pipe.Call(context.Background(), req))
		evs := readEvents(t, h.auditPath)[before:]
		switch {
		case tt.want == "" && (isErr || len(evs) != 2 || evs[0].Decision != "allow"):
			t.Errorf("%s: %q, %d events; want it run, decided and audited", tt.name, text, len(evs))
		case tt.want != "" && (!isErr || !strings.HasPrefix(text, tt.want) || len(evs) != 1 || evs[0].Decision != "deny"):
			t.Errorf("%s: %q, %d events; want %q, audited once", tt.name, text, len(evs), tt.want)
		}
	}
}

const decideWS = `version: 1
gateway:
  approvals:
    wait: 3s
    rules:
      - agent: a
        capability: tool:srv:write_it
        param_constraints: {n: {maximum: 5}}
mcp_servers:
  - id: srv
    command: [srv]
    trust_annotations: true
    permission_overrides: {strict_one: strict}
agents:
  - id: a
    token: {env: A}
    grants: [server:srv]
`

// decideSnapshot builds the snapshot of decideWS with srv listing tools,
// as the gateway and the CLI build it.
func decideSnapshot(t *testing.T, tools []string) *Snapshot {
	t.Helper()
	ws, policy := compileWorkspace(t, t.TempDir(), decideWS)
	snap, err := NewSnapshot(ws, policy)
	if err != nil {
		t.Fatal(err)
	}
	var raws []json.RawMessage
	for _, d := range tools {
		raws = append(raws, json.RawMessage(d))
	}
	var refused map[string]error
	snap.Policy, refused = WithListings(policy, map[string][]grantcheck.ToolInfo{"srv": grantcheck.ToolInfos(raws)})
	if refused != nil {
		t.Fatal(refused)
	}
	return snap
}

// compileWorkspace writes yaml as dir's workspace, loads and compiles it.
func compileWorkspace(t *testing.T, dir, yaml string) (*workspace.Workspace, *grantcheck.Policy) {
	t.Helper()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := grantcheck.Compile(ws)
	if err != nil {
		t.Fatal(err)
	}
	return ws, policy
}

var decideTools = []string{
	`{"name":"read_it","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`,
	`{"name":"write_it","inputSchema":{"type":"object","properties":{"n":{"type":"number"}}}}`,
	`{"name":"strict_one","inputSchema":{"type":"object"}}`,
}

// TestSnapshotDecide: the one decision — policy, then the pin, then the
// approval rules — and Explain records the same verdict stage by stage.
func TestSnapshotDecide(t *testing.T) {
	t.Parallel()
	snap := decideSnapshot(t, decideTools)
	if snap.Wait.String() != "3s" || snap.Rules.Len() != 1 {
		t.Fatalf("snapshot %+v", snap)
	}
	lock := pin.New()
	var pins []pin.Tool
	for _, d := range decideTools {
		p, err := pin.DigestTool([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		pins = append(pins, p)
	}
	lock.SetSurface("srv", pins[:2]) // strict_one was never pinned
	snap.Lock = lock
	snap.Live = func(surface, member string) pin.Digest {
		for _, p := range pins {
			if p.Name == member {
				return p.Digest
			}
		}
		return ""
	}
	for _, tc := range []struct {
		tool       string
		args       map[string]any
		final      grantcheck.Outcome
		stage      grantcheck.Stage
		approvedBy string
		reason     string
	}{
		{"read_it", nil, grantcheck.Allow, grantcheck.StageTier, "", "cautious tier: read allowed"},
		{"write_it", map[string]any{"n": 5.0}, grantcheck.Allow, grantcheck.StageTier, "rule:1", "needs approval"},
		{"write_it", map[string]any{"n": 6.0}, grantcheck.Approval, grantcheck.StageTier, "", "needs approval"},
		{"write_it", map[string]any{"n": "x"}, grantcheck.Deny, grantcheck.StageSchema, "", "input schema"},
		{"strict_one", nil, grantcheck.Deny, StagePin, "", "tool:srv:strict_one was not pinned"},
		{"nope", nil, grantcheck.Deny, grantcheck.StageGrant, "", `unknown tool "srv:nope"`},
	} {
		v := snap.Decide("a", "srv", tc.tool, tc.args)
		if v.Final() != tc.final || v.Stage != tc.stage || v.ApprovedBy != tc.approvedBy || !strings.Contains(v.Reason, tc.reason) {
			t.Errorf("%s %v: %s at %s by %q: %s", tc.tool, tc.args, v.Final(), v.Stage, v.ApprovedBy, v.Reason)
		}
		e := snap.Explain("a", "srv", tc.tool, tc.args)
		if e.Verdict.Final() != v.Final() || e.Reason != v.Reason || e.ApprovedBy != v.ApprovedBy {
			t.Errorf("%s: Explain %+v differs from Decide %+v", tc.tool, e.Verdict, v)
		}
		if n := len(e.Steps); n != len(grantcheck.Stages())+2 || e.Steps[n-2].Stage != StagePin || e.Steps[n-1].Stage != StageApproval {
			t.Errorf("%s: steps %+v", tc.tool, e.Steps)
		}
	}
	// A definition changed after pinning is refused by the same decision.
	snap.Live = func(string, string) pin.Digest { return pin.Digest("sha256:" + strings.Repeat("0", 64)) }
	if v := snap.Decide("a", "srv", "read_it", nil); v.Final() != grantcheck.Deny || v.Stage != StagePin || !strings.Contains(v.Reason, "its definition now is sha256:0000") {
		t.Errorf("changed definition: %+v", v)
	}
	snap.Lock = nil // no lock: nothing is pinned
	if v := snap.Decide("a", "srv", "strict_one", nil); v.Final() != grantcheck.Approval {
		t.Errorf("no lock: %+v", v)
	}
}

// TestWithListings: a listing no capability can address leaves its server
// unlisted (its server: grant covers nothing), as the gateway leaves it.
func TestWithListings(t *testing.T) {
	t.Parallel()
	snap := decideSnapshot(t, nil)
	bad := []grantcheck.ToolInfo{{Name: "has space"}}
	p, refused := WithListings(snap.Policy, map[string][]grantcheck.ToolInfo{"srv": bad, "undeclared": {{Name: "x"}}})
	if refused["srv"] == nil || refused["undeclared"] == nil || !strings.Contains(refused["srv"].Error(), "not usable for grants") {
		t.Fatalf("refused %v", refused)
	}
	if d := p.Decide("a", "srv", "has space", nil); d.Outcome != grantcheck.Deny {
		t.Errorf("an unaddressable tool decided %s", d.Outcome)
	}
}
