package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// revision is what the gateway decides with right now: the pipeline's
// snapshot and the per-(agent, surface) views compiled from its policy.
// A new policy (a reload, a downstream listing) is a new revision, so
// views never outlive the grants they were computed from.
type revision struct {
	snap  *callpipe.Snapshot
	views sync.Map // endpointKey → *agentView
	// superseded is closed when a newer revision replaces this one, which
	// wakes subscriptions/listen streams to compare the agent's new view.
	superseded chan struct{}
	// ws and surfaces are the workspace this revision was loaded from and
	// its pack surfaces (buildSurfaces).
	ws       *workspace.Workspace
	surfaces map[string]*surface
	// packPins are the digests of this workspace's pack commands
	// (revision_pins.go); the lock in force is the snapshot's Lock.
	packPins map[string]map[string]pin.Digest
}

func newRevision(snap *callpipe.Snapshot) *revision {
	return &revision{snap: snap, superseded: make(chan struct{})}
}

// swapRevision replaces old with next if old is still in force.
func (g *Gateway) swapRevision(old, next *revision) bool {
	if !g.rev.CompareAndSwap(old, next) {
		return false
	}
	close(old.superseded)
	return true
}

// buildRevision builds what the gateway decides with under ws: the
// snapshot (policy, approval rules, revision and its generation, wait,
// elicitation, the approval hint, the pins) and the pack surfaces; views
// start empty. The generation comes from the shared store, so every
// process of the deployment that loads this file numbers it alike; a store
// that cannot record it refuses the revision (at start, or the reload: the
// revision in force stays), since approvals could not be bound to it.
func (g *Gateway) buildRevision(ctx context.Context, ws *workspace.Workspace, policy *grantcheck.Policy) (*revision, error) {
	snap, err := callpipe.NewSnapshot(ws, policy)
	if err != nil {
		return nil, err
	}
	if snap.Generation, err = g.store.RecordRevision(ctx, ws.Revision); err != nil {
		return nil, fmt.Errorf("the shared store could not number the workspace revision: %w", err)
	}
	snap.ApproveHint = g.approveHint
	pins, err := packPins(ws)
	if err != nil {
		return nil, err
	}
	snap.Live = g.liveDigest(pins)
	rev := newRevision(snap)
	rev.ws, rev.surfaces, rev.packPins = ws, buildSurfaces(ws), pins
	return rev, nil
}

// liveDigest is the snapshot's Live: a pack command's digest from its
// declaration (packPins of the revision's workspace), a proxied tool's
// from its server's last listing.
func (g *Gateway) liveDigest(packPins map[string]map[string]pin.Digest) func(surface, member string) pin.Digest {
	return func(surface, member string) pin.Digest {
		if cmds, ok := packPins[surface]; ok {
			return cmds[member]
		}
		if g.proxy != nil {
			if ps := g.proxy.server(surface); ps != nil {
				return ps.digestOf(member)
			}
		}
		return ""
	}
}

// withLock is a revision with old's workspace, surfaces and pack pins,
// deciding with (a copy of) snap under lock l — the lock in force is the
// snapshot's, so the listing filter and the decision read the same one.
func withLock(old *revision, snap callpipe.Snapshot, l *pin.Lock) *revision {
	snap.Lock = l
	next := newRevision(&snap)
	next.ws, next.surfaces, next.packPins = old.ws, old.surfaces, old.packPins
	return next
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
		if g.swapRevision(old, withLock(old, snap, old.snap.Lock)) {
			return nil
		}
	}
}

// live is the workspace in force.
func (g *Gateway) live() *workspace.Workspace { return g.rev.Load().ws }

// surface returns the pack surface id of the revision in force.
func (g *Gateway) surface(id string) (*surface, bool) {
	s, ok := g.rev.Load().surfaces[id]
	return s, ok
}

// errReloadedMeanwhile refuses a call whose decision and execution would
// straddle a reload.
var errReloadedMeanwhile = errors.New("the workspace was reloaded while this call was being decided; repeat the call to have it decided under the new revision")

// decidingSurface returns pack id as declared by the revision that is
// deciding the call in ctx — so what runs is what was decided, even when a
// reload lands between the decision and Prepare (the call is then refused
// and can be repeated).
func (g *Gateway) decidingSurface(ctx context.Context, id string) (*surface, error) {
	rev := g.rev.Load()
	if snap := callpipe.SnapshotFrom(ctx); snap != nil && snap.Revision != rev.snap.Revision {
		return nil, errReloadedMeanwhile
	}
	s, ok := rev.surfaces[id]
	if !ok {
		return nil, errors.New(grantcheck.UnknownToolReason(id, ""))
	}
	return s, nil
}
