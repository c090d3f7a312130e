package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
)

// requestStateSecret names the deployment's secret that seals the MCP
// requestState toolgate issues, so a retry may land on any replica.
const requestStateSecret = "requeststate"

// initPipeline builds the approval broker on the shared store, compiles
// the approval rules into the first revision and starts the call
// pipeline. Decided approval requests are audited as events of their own
// (approved, denied, expired) by the process whose store update made the
// decision — once in the whole deployment.
func (g *Gateway) initPipeline(ctx context.Context, policy *grantcheck.Policy, lock *pin.Lock) error {
	rev, err := g.buildRevision(ctx, g.ws, policy)
	if err != nil {
		return err
	}
	rev.snap.Lock = lock
	key, err := g.store.Secret(ctx, requestStateSecret)
	if err != nil {
		return fmt.Errorf("the shared store's requestState key: %w", err)
	}
	sealer, err := callpipe.NewSealer(key)
	if err != nil {
		return err
	}
	journal := callpipe.NewJournal(g.audit)
	opened, err := g.initNotify(journal)
	if err != nil {
		return err
	}
	g.approvals = approvals.New(approvals.Options{
		OnOpened:           opened,
		TTL:                g.ws.Gateway.Approvals.TTL.D(),
		Store:              g.store,
		MaxPendingPerAgent: g.ws.Gateway.Approvals.MaxPendingOrDefault(),
		OnDecision: func(r approvals.Request) {
			if err := journal.Append(callpipe.ApprovalEvent(r, g.runner.Redactor())); err != nil {
				g.log.Error("audit append failed for an approval decision", "approval", r.ID, "err", err)
			}
		},
		OnRuleExpired: func(t approvals.TimedRule) {
			if err := journal.Append(callpipe.RuleExpiredEvent(t)); err != nil {
				g.log.Error("audit append failed for the end of a timed approval rule", "rule", t.ID, "err", err)
			}
		},
	})
	g.rev.Store(rev)
	g.reloads.update(func(st *ReloadStatus) {
		st.Revision, st.LoadedAt, st.Generation = g.ws.Revision, time.Now().UTC(), rev.snap.Generation
	})
	g.pipe = callpipe.New(callpipe.Options{
		Snapshot:  func() *callpipe.Snapshot { return g.rev.Load().snap },
		Approvals: g.approvals,
		Journal:   journal,
		Redactor:  g.runner.Redactor(),
		Sealer:    sealer,
		Observer:  callObserver{g.metrics},
		Logger:    g.log,
	})
	return nil
}

// approveHint tells the agent (and through it the user) how an operator
// approves a held call, in commands that work for this very process: the
// workspace's store is shared, so `toolgate approvals -w` reaches it from
// any shell that can open the store; a daemon adds its admin API and
// console.
func (g *Gateway) approveHint(id string) string {
	hint := fmt.Sprintf("`toolgate approvals -w %s approve %s`", g.workspaceAbs(), id)
	if u := g.adminURL(); u != "" {
		hint += fmt.Sprintf(", `toolgate approvals --server %s approve %s` or in the console at %s/ui", u, id, u)
	}
	return hint
}

// workspaceAbs is the workspace file's absolute path, for commands an
// operator runs from anywhere.
func (g *Gateway) workspaceAbs() string {
	path, err := filepath.Abs(g.ws.Path)
	if err != nil {
		return g.ws.Path
	}
	return path
}

// adminURL is the base URL of this process's admin API, "" when it serves
// none.
func (g *Gateway) adminURL() string {
	if u := g.serveURL.Load(); u != nil && *u != "" && g.admin != nil && g.admin.On() {
		return *u
	}
	return ""
}
