package callpipe

import (
	"fmt"
	"maps"
	"slices"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// NewSnapshot builds what calls are decided with under ws and its compiled
// policy: the approval rules (compiled against policy), the revision, the
// approval wait and elicitation. The gateway builds every revision with it
// and the offline commands (`toolgate explain`, `check`, `policy test`)
// build theirs with it, so both decide under the same snapshot. The caller
// applies server listings (WithListings) and sets Lock and Live.
func NewSnapshot(ws *workspace.Workspace, policy *grantcheck.Policy) (*Snapshot, error) {
	rules, err := approvals.CompileRules(policy, ws)
	if err != nil {
		return nil, err
	}
	wait := ws.Gateway.Approvals.Wait.D()
	if wait <= 0 {
		wait = approvals.DefaultWait
	}
	return &Snapshot{
		Policy:      policy,
		Rules:       rules,
		Revision:    ws.Revision,
		Wait:        wait,
		Elicitation: ws.Gateway.Approvals.Elicitation,
	}, nil
}

// WithListings returns policy with each listed server's tools applied, in
// server id order: server: and tool:<id>:* grants then cover them and
// their input schemas are checked. A listing the policy refuses (a name no
// capability can address, a tool listed twice, an undeclared server) is
// left out — that server stays unlisted, as the gateway leaves it — and
// returned in refused.
func WithListings(policy *grantcheck.Policy, listings map[string][]grantcheck.ToolInfo) (_ *grantcheck.Policy, refused map[string]error) {
	for _, id := range slices.Sorted(maps.Keys(listings)) {
		np, err := policy.WithServerTools(id, listings[id])
		if err != nil {
			if refused == nil {
				refused = map[string]error{}
			}
			refused[id] = fmt.Errorf("its listing is not usable for grants: %w", err)
			continue
		}
		policy = np
	}
	return policy, refused
}
