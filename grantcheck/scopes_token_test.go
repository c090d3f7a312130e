package grantcheck

import (
	"slices"
	"strings"
	"testing"
)

const tokenScopesWorkspace = `version: 1
command_packs:
  - id: notes
    permission: cautious
    commands:
      - {id: read, argv: [echo, r], effects: read, scopes: [notes:read]}
      - {id: write, argv: [echo, w], effects: write, scopes: [notes:read, notes:write]}
      - {id: free, argv: [echo, f], effects: read}
agents:
  - id: bot
    scopes: [notes:read, notes:write]
    grants: [tool:notes:read, tool:notes:write, tool:notes:free]
  - id: narrow
    scopes: [notes:read]
    grants: [tool:notes:write]
`

// TestNarrowScopes: the effective scopes are the agent's declared ones ∩
// the token's. A tool needing a scope the token lacks is refused at the
// scopes stage naming it (even if declared); a token granting more than
// the agent declares adds nothing; a refusal stays the refusal it was.
func TestNarrowScopes(t *testing.T) {
	t.Parallel()
	p := compileYAML(t, tokenScopesWorkspace)
	tests := []struct {
		agent, tool string
		token       []string
		want        Outcome
		missing     []string
	}{
		{"bot", "read", []string{"notes:read"}, Allow, nil},
		{"bot", "write", []string{"notes:read"}, Deny, []string{"notes:write"}},
		{"bot", "write", nil, Deny, []string{"notes:read", "notes:write"}},
		{"bot", "write", []string{"notes:write", "notes:read"}, Approval, nil},
		{"bot", "free", nil, Allow, nil},
		// The token cannot add a scope the agent does not declare.
		{"narrow", "write", []string{"notes:read", "notes:write"}, Deny, []string{"notes:write"}},
		// Not granted: still the unknown-tool refusal, nothing disclosed.
		{"bot", "nope", []string{"notes:read"}, Deny, nil},
	}
	for _, tt := range tests {
		d := p.Decide(tt.agent, "notes", tt.tool, map[string]any{})
		got := p.NarrowScopes(d, "notes", tt.tool, tt.token)
		if got.Outcome != tt.want || !slices.Equal(got.MissingScopes, tt.missing) {
			t.Errorf("%s %s token %v: %s missing %v (%s), want %s missing %v", tt.agent, tt.tool, tt.token, got.Outcome, got.MissingScopes, got.Reason, tt.want, tt.missing)
		}
		if got.Outcome == Deny && len(tt.missing) > 0 && (got.Stage != StageScopes || !strings.HasPrefix(got.Reason, "missing scopes: ")) {
			t.Errorf("%s %s: stage %s reason %q", tt.agent, tt.tool, got.Stage, got.Reason)
		}
	}
}
