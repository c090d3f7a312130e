package grantcheck

import (
	"fmt"
	"strings"
)

// NarrowScopes applies the caller's access token to decision d of
// surfaceID:memberName: with JWT identity the effective scopes are the
// agent's declared scopes ∩ the token's scope claim, so a tool that
// requires a scope the token does not grant is refused at the scopes
// stage, naming what is missing — even when the agent declares it. d is
// returned unchanged when it already denies or the tool requires nothing
// the token lacks. serve and explain --scopes both narrow with it.
func (p *Policy) NarrowScopes(d Decision, surfaceID, memberName string, token []string) Decision {
	if d.Outcome == Deny {
		return d
	}
	s := p.surfaces[surfaceID]
	if s == nil {
		return d
	}
	m := s.members[memberName]
	if m == nil {
		return d
	}
	granted := make(map[string]bool, len(token))
	for _, sc := range token {
		granted[sc] = true
	}
	var missing []string
	for _, sc := range m.scopes {
		if !granted[sc] {
			missing = append(missing, sc)
		}
	}
	if len(missing) == 0 {
		return d
	}
	d.Outcome, d.Stage, d.MissingScopes = Deny, StageScopes, missing
	d.Reason = fmt.Sprintf("missing scopes: %s (the tool requires %s; the access token grants %s)",
		strings.Join(missing, ", "), strings.Join(m.scopes, ", "), listOrNone(token))
	return d
}

// NarrowExplanation is NarrowScopes for `toolgate explain --scopes`: the
// decision narrowed, the scopes stage failed with the reason and the
// stages after it skipped.
func (p *Policy) NarrowExplanation(e Explanation, surfaceID, memberName string, token []string) Explanation {
	d := p.NarrowScopes(e.Decision, surfaceID, memberName, token)
	if d.Outcome == e.Outcome {
		for i, st := range e.Steps {
			if st.Stage == StageScopes && st.Status == "pass" {
				e.Steps[i].Detail += "; the access token grants " + listOrNone(token)
			}
		}
		return e
	}
	e.Decision = d
	after := false
	for i, st := range e.Steps {
		switch {
		case st.Stage == StageScopes:
			e.Steps[i] = Step{Stage: StageScopes, Status: "fail", Detail: d.Reason}
			after = true
		case after:
			e.Steps[i] = Step{Stage: st.Stage, Status: "skipped"}
		}
	}
	return e
}
