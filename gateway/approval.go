package gateway

import (
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
)

// initPipeline builds the approval broker, compiles the approval rules
// into the first snapshot and starts the call pipeline. Decided approval
// requests are audited as events of their own (approved, denied, expired).
func (g *Gateway) initPipeline(policy *grantcheck.Policy) error {
	rules, err := approvals.CompileRules(policy, g.ws)
	if err != nil {
		return err
	}
	journal := callpipe.NewJournal(g.audit)
	g.approvals = approvals.New(approvals.Options{
		TTL: g.ws.Gateway.Approvals.TTL.D(),
		OnDecision: func(r approvals.Request) {
			if err := journal.Append(callpipe.ApprovalEvent(r, g.runner)); err != nil {
				g.log.Error("audit append failed for an approval decision", "approval", r.ID, "err", err)
			}
		},
	})
	g.rev.Store(newRevision(&callpipe.Snapshot{
		Policy:      policy,
		Rules:       rules,
		Revision:    g.ws.Revision,
		Wait:        g.approvalWait(),
		Elicitation: g.ws.Gateway.Approvals.Elicitation,
	}))
	g.pipe = callpipe.New(callpipe.Options{
		Snapshot:  func() *callpipe.Snapshot { return g.rev.Load().snap },
		Approvals: g.approvals,
		Journal:   journal,
		Redactor:  g.runner,
		Logger:    g.log,
	})
	return nil
}

// approvalWait is how long a call waits for a decision.
func (g *Gateway) approvalWait() time.Duration {
	if w := g.ws.Gateway.Approvals.Wait.D(); w > 0 {
		return w
	}
	return approvals.DefaultWait
}

// Approvals returns the broker of this gateway process.
func (g *Gateway) Approvals() *approvals.Broker { return g.approvals }

// withPolicy swaps in a revision deciding with the policy update returns
// (a downstream server's new listing), keeping the rest of the snapshot.
// Views are rebuilt lazily for the new policy.
func (g *Gateway) withPolicy(update func(*grantcheck.Policy) (*grantcheck.Policy, error)) error {
	for {
		old := g.rev.Load()
		np, err := update(old.snap.Policy)
		if err != nil {
			return err
		}
		snap := *old.snap
		snap.Policy = np
		if g.swapRevision(old, newRevision(&snap)) {
			return nil
		}
	}
}
