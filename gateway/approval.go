package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// requestStateSecret names the deployment's secret that seals the MCP
// requestState toolgate issues, so a retry may land on any replica.
const requestStateSecret = "requeststate"

// initPipeline builds the approval broker on the shared store, compiles
// the approval rules into the first revision and starts the call
// pipeline. Decided approval requests are audited as events of their own
// (approved, denied, expired) by the process whose store update made the
// decision — once in the whole deployment.
func (g *Gateway) initPipeline(ctx context.Context, policy *grantcheck.Policy) error {
	rev, err := g.buildRevision(g.ws, policy)
	if err != nil {
		return err
	}
	if rev.lock, err = g.initialLock(); err != nil {
		return err
	}
	key, err := g.store.Secret(ctx, requestStateSecret)
	if err != nil {
		return fmt.Errorf("the shared store's requestState key: %w", err)
	}
	sealer, err := callpipe.NewSealer(key)
	if err != nil {
		return err
	}
	journal := callpipe.NewJournal(g.audit)
	g.approvals = approvals.New(approvals.Options{
		TTL:                g.ws.Gateway.Approvals.TTL.D(),
		Store:              g.store,
		MaxPendingPerAgent: g.ws.Gateway.Approvals.MaxPendingOrDefault(),
		OnDecision: func(r approvals.Request) {
			if err := journal.Append(callpipe.ApprovalEvent(r, g.runner)); err != nil {
				g.log.Error("audit append failed for an approval decision", "approval", r.ID, "err", err)
			}
		},
	})
	g.rev.Store(rev)
	g.reloads.update(func(st *ReloadStatus) { st.Revision, st.LoadedAt = g.ws.Revision, time.Now().UTC() })
	g.pipe = callpipe.New(callpipe.Options{
		Snapshot:  func() *callpipe.Snapshot { return g.rev.Load().snap },
		Approvals: g.approvals,
		Journal:   journal,
		Redactor:  g.runner,
		Sealer:    sealer,
		Observer:  callObserver{g.metrics},
		Logger:    g.log,
	})
	return nil
}

// buildRevision builds what the gateway decides with under ws: the
// snapshot (policy, approval rules, revision, wait, elicitation, the
// approval hint) and the pack surfaces; views start empty.
func (g *Gateway) buildRevision(ws *workspace.Workspace, policy *grantcheck.Policy) (*revision, error) {
	rules, err := approvals.CompileRules(policy, ws)
	if err != nil {
		return nil, err
	}
	wait := ws.Gateway.Approvals.Wait.D()
	if wait <= 0 {
		wait = approvals.DefaultWait
	}
	rev := newRevision(&callpipe.Snapshot{
		Policy:      policy,
		Rules:       rules,
		Revision:    ws.Revision,
		Wait:        wait,
		Elicitation: ws.Gateway.Approvals.Elicitation,
		ApproveHint: g.approveHint,
	})
	rev.ws, rev.surfaces = ws, buildSurfaces(ws)
	if rev.packPins, err = packPins(ws); err != nil {
		return nil, err
	}
	return rev, nil
}

// buildSurfaces indexes the workspace's command packs by id.
func buildSurfaces(ws *workspace.Workspace) map[string]*surface {
	out := make(map[string]*surface, len(ws.CommandPacks))
	for _, p := range ws.CommandPacks {
		s := &surface{pack: p, commands: make(map[string]*workspace.Command, len(p.Commands))}
		for _, c := range p.Commands {
			s.commands[c.ID] = c
		}
		out[p.ID] = s
	}
	return out
}

// approveHint tells the agent (and through it the user) how an operator
// approves a held call, in commands that work for this very process: the
// workspace's store is shared, so `toolgate approvals -w` reaches it from
// any shell that can open the store; a daemon adds its admin API and
// console.
func (g *Gateway) approveHint(id string) string {
	path, err := filepath.Abs(g.ws.Path)
	if err != nil {
		path = g.ws.Path
	}
	hint := fmt.Sprintf("`toolgate approvals -w %s approve %s`", path, id)
	if u := g.serveURL.Load(); u != nil && *u != "" && g.admin.off == "" {
		hint += fmt.Sprintf(", `toolgate approvals --server %s approve %s` or in the console at %s/ui", *u, id, *u)
	}
	return hint
}

// SetBaseURL tells the gateway the base URL it is reached at (a daemon
// once it listens), so the approval hint can name its admin API and
// console.
func (g *Gateway) SetBaseURL(u string) { g.serveURL.Store(&u) }

// Approvals returns the broker of this gateway process.
func (g *Gateway) Approvals() *approvals.Broker { return g.approvals }

// withPolicy swaps in a revision deciding with the policy update returns
// (a downstream server's new listing), keeping the rest of the revision.
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
		next := newRevision(&snap)
		next.ws, next.surfaces, next.packPins, next.lock = old.ws, old.surfaces, old.packPins, old.lock
		if g.swapRevision(old, next) {
			return nil
		}
	}
}
