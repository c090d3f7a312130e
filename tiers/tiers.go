// Package tiers holds the four permission tiers of docs/approvals.md and how a
// member's tier and timeout are resolved from its container (a pack or an MCP
// server). Packs and servers resolve the same way, so a tool's treatment never
// depends on which kind of surface serves it.
package tiers

import (
	"time"

	"github.com/toolgate/toolgate/workspace"
)

// Outcome is what the tier decides for a call that passed every other check.
// It is the one definition of the allow/approval/deny verdict; grantcheck and
// the gateway use it rather than declaring their own.
type Outcome string

// The three outcomes. The zero value is not an outcome: callers that receive
// it must treat it as Deny.
const (
	Allow    Outcome = "allow"
	Approval Outcome = "approval"
	Deny     Outcome = "deny"
)

// Resolve returns the tier of member: its override, else the container's
// tier, else cautious (the default of docs/approvals.md).
func Resolve(container workspace.Tier, overrides map[string]workspace.Tier, member string) workspace.Tier {
	if t, ok := overrides[member]; ok && t != "" {
		return t
	}
	if container != "" {
		return container
	}
	return workspace.TierCautious
}

// OutcomeFor applies the tier table: open allows everything, cautious asks
// for writes, strict asks for everything, readonly refuses writes. An
// unknown tier denies, and any effect other than read counts as a write, so
// a mistake upstream fails closed.
func OutcomeFor(t workspace.Tier, e workspace.Effect) Outcome {
	read := e == workspace.EffectRead
	switch t {
	case workspace.TierOpen:
		return Allow
	case workspace.TierCautious:
		if read {
			return Allow
		}
		return Approval
	case workspace.TierStrict:
		return Approval
	case workspace.TierReadonly:
		if read {
			return Allow
		}
		return Deny
	}
	return Deny
}

// Timeout returns member's timeout: its override, else the container's
// default, else builtin (the engine's own default when nothing is declared).
func Timeout(def workspace.Duration, overrides map[string]workspace.Duration, member string, builtin time.Duration) time.Duration {
	if d, ok := overrides[member]; ok && d > 0 {
		return d.D()
	}
	if def > 0 {
		return def.D()
	}
	return builtin
}
