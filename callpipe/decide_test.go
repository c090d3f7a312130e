package callpipe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/grantcheck"
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
