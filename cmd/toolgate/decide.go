package main

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/gateway"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// decider is what `toolgate explain`, `check` and `policy test` decide
// with: the snapshot the gateway would build for the workspace
// (callpipe.NewSnapshot, callpipe.WithListings, toolgate.lock and the live
// digests), decided by callpipe.Snapshot.Decide — the pipeline's own
// decision, never a second one.
type decider struct {
	ws   *workspace.Workspace
	snap *callpipe.Snapshot
	// lock is toolgate.lock (nil when there is none).
	lock *pin.Lock
	// tools are the proxied servers' tools decided with, by server: from
	// the lock (--offline) or as listed now.
	tools map[string][]pin.Tool
	// unlisted says, per server whose tools are not known, why: not
	// reached, not in the lock. Its server: grants then cover nothing, as
	// in the gateway while it cannot list the server.
	unlisted map[string]string
	// listErrs are the servers that could not be listed (live only).
	listErrs map[string]error
	offline  bool
}

// newDecider builds the decision snapshot of ws (compiled as policy)
// under lock, toolgate.lock as gateway.ReadLock reads it. With
// offline the servers' tools come from toolgate.lock and nothing is
// contacted; without, they are listed now exactly as `serve` lists them.
func (c *cli) newDecider(ctx context.Context, ws *workspace.Workspace, policy *grantcheck.Policy, lock *pin.Lock, offline bool) (*decider, error) {
	d := &decider{ws: ws, tools: map[string][]pin.Tool{}, unlisted: map[string]string{}, offline: offline, lock: lock}
	lockPath := pin.PathFor(ws.Path)
	if offline {
		for _, s := range ws.MCPServers {
			switch {
			case lock == nil:
				d.unlisted[s.ID] = fmt.Sprintf("--offline and no %s beside the workspace: run `toolgate pin` to record its tools", pin.FileName)
			case lock.Surfaces[s.ID] == nil:
				d.unlisted[s.ID] = fmt.Sprintf("not in %s: run `toolgate pin --update` to record its tools", lockPath)
			default:
				if _, ok := lock.SurfaceDefinitions(s.ID); !ok {
					d.unlisted[s.ID] = fmt.Sprintf("%s records only digests for it (an older format): run `toolgate pin --update` to record its definitions", lockPath)
					continue
				}
				d.tools[s.ID] = lock.Tools(s.ID)
			}
		}
	} else {
		served, errs := c.serverLister()(ctx, ws)
		d.listErrs = errs
		for id, err := range errs {
			d.unlisted[id] = "not reached: " + err.Error()
		}
		for id, tools := range served {
			d.tools[id] = tools
		}
	}
	listings := make(map[string][]grantcheck.ToolInfo, len(d.tools))
	live := make(map[string]map[string]pin.Digest, len(d.tools))
	for id, tools := range d.tools {
		infos := make([]grantcheck.ToolInfo, 0, len(tools))
		digests := make(map[string]pin.Digest, len(tools))
		for _, t := range tools {
			if info, ok := grantcheck.ParseToolInfo(t.Definition); ok {
				infos = append(infos, info)
			}
			digests[t.Name] = t.Digest
		}
		listings[id], live[id] = infos, digests
	}
	packs, err := pin.PackTools(ws)
	if err != nil {
		return nil, err
	}
	for id, tools := range packs {
		digests := make(map[string]pin.Digest, len(tools))
		for _, t := range tools {
			digests[t.Name] = t.Digest
		}
		live[id] = digests
	}
	snap, err := callpipe.NewSnapshot(ws, policy)
	if err != nil {
		return nil, err
	}
	var refused map[string]error
	snap.Policy, refused = callpipe.WithListings(policy, listings)
	for id, err := range refused {
		d.unlisted[id] = err.Error()
	}
	snap.Lock = lock
	snap.Live = func(surface, member string) pin.Digest { return live[surface][member] }
	d.snap = snap
	return d, nil
}

// warnUnlisted tells the operator which servers' tools could not be known,
// and so what the decisions shown assume.
func (d *decider) warnUnlisted(c *cli, cmd string) {
	for _, id := range slices.Sorted(maps.Keys(d.unlisted)) {
		fmt.Fprintf(c.stderr, "toolgate %s: server %q: %s; its tools are decided as the gateway decides them while it cannot list them (server: grants cover none)\n", cmd, id, d.unlisted[id])
	}
}

// loadDecider loads and compiles the workspace at path and builds its
// decider, printing every problem (FILE:LINE:COL for the workspace).
func (c *cli) loadDecider(ctx context.Context, cmd, path string, offline bool) (*decider, bool) {
	ws, policy, ok := loadPolicy(c, path)
	if !ok {
		return nil, false
	}
	lock, err := gateway.ReadLock(ws.Path)
	if err != nil {
		printLoadError(c, err)
		return nil, false
	}
	d, err := c.newDecider(ctx, ws, policy, lock, offline)
	if err != nil {
		printLoadError(c, err)
		return nil, false
	}
	d.warnUnlisted(c, cmd)
	return d, true
}
