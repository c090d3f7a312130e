package gateway

import (
	"fmt"
	"maps"
	"sync"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// Pinned tool definitions. With toolgate.lock beside the
// workspace, a tool — proxied or a pack command — whose live definition
// digest differs from its pin, or that was never pinned, is left out of
// tools/list and its calls are refused ("DENIED: tool definition changed
// since it was pinned", one audited decision) until `toolgate pin
// --update` records the reviewed definition. The lock in force is part of
// the revision (so a list and the views built from it agree); the file is
// followed like the workspace (WatchWorkspace, SIGHUP): a `pin --update`
// takes effect without a restart, a lock that fails to parse leaves the
// one in force and is shown in /admin/status. Each definition that stops
// being served is audited once when it is first seen (old and new digest);
// every refused call is audited as its own decision.

// pinState follows the lock file.
type pinState struct {
	path string

	mu sync.Mutex
	// stamp is the lock file as last read; err why the file on disk is not
	// the lock in force ("" when it is).
	stamp fileStamp
	err   string
	// reported holds, per tool not served, the live digest already
	// audited, so each change is audited once.
	reported map[pinKey]pin.Digest
}

type pinKey struct{ surface, tool string }

// newPins follows the lock beside ws's file; initial reads it.
func newPins(ws *workspace.Workspace) *pinState {
	return &pinState{path: pin.PathFor(ws.Path), reported: map[pinKey]pin.Digest{}}
}

// readLock reads the lock file (ReadLock) and its stamp.
func (p *pinState) readLock() (*pin.Lock, fileStamp, error) {
	st := stampOf(p.path)
	l, err := readLockFile(p.path)
	return l, st, err
}

// initial is the lock the first revision decides with, read as the
// stamp the file is followed from. A missing lock means no pinning; one
// that cannot be read or parsed stops the gateway (fail closed: the
// operator meant to pin).
func (p *pinState) initial() (*pin.Lock, error) {
	l, st, err := p.readLock()
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.stamp = st
	p.mu.Unlock()
	return l, nil
}

// checkLock reads the lock file again when it changed (force: always) and
// makes it the lock in force; a bad file is logged and shown, and the lock
// in force stays. It waits for a reload being decided, so a reload's names
// are checked against the lock it is installed with.
func (g *Gateway) checkLock(force bool) {
	g.reloads.run.Lock()
	defer g.reloads.run.Unlock()
	g.followLock(force)
}

// followLock is checkLock for a caller holding reloads.run. A new lock
// that no longer lists a tool the workspace in force names still applies
// (keeping the old one would serve definitions the operator unpinned);
// each such name is logged, and the next reload, or a restart, refuses
// the file until it is fixed.
func (g *Gateway) followLock(force bool) {
	p := g.pins
	st := stampOf(p.path)
	p.mu.Lock()
	same := st == p.stamp
	p.mu.Unlock()
	if same && !force {
		return
	}
	l, st, err := p.readLock()
	p.mu.Lock()
	p.stamp = st
	if err != nil {
		changed := p.err != err.Error()
		p.err = err.Error()
		p.mu.Unlock()
		if changed {
			g.log.Error("toolgate.lock refused; the pins in force stay", "lock", p.path, "err", err)
			g.auditPins("refused", "toolgate.lock refused, the pins in force stay: "+err.Error())
		}
		return
	}
	p.err = ""
	p.mu.Unlock()
	old := g.rev.Load().snap.Lock
	if sameLock(old, l) {
		return
	}
	g.setLock(l)
	if err := CheckNames(g.live(), l, nil); err != nil {
		for _, e := range workspace.AsList(err) {
			g.log.Warn("the workspace in force names a tool the new toolgate.lock does not list; the next reload or restart refuses the file until it is fixed", "lock", p.path, "err", e.Error())
		}
	}
	what := "toolgate.lock removed: tool definitions are no longer pinned"
	if l != nil {
		what = fmt.Sprintf("toolgate.lock reloaded: %d pinned tools", lockLen(l))
	}
	g.log.Info(what, "lock", p.path)
	g.auditPins("reloaded", what)
	g.reportPins()
}

// setLock swaps in a revision deciding with lock l, keeping the rest.
func (g *Gateway) setLock(l *pin.Lock) {
	for {
		old := g.rev.Load()
		if g.swapRevision(old, withLock(old, *old.snap, l)) {
			return
		}
	}
}

// lockLen counts the tools a lock pins.
func lockLen(l *pin.Lock) int {
	n := 0
	for _, tools := range l.Surfaces {
		n += len(tools)
	}
	return n
}

func sameLock(a, b *pin.Lock) bool {
	if a == nil || b == nil {
		return a == b
	}
	return maps.EqualFunc(a.Surfaces, b.Surfaces, func(x, y map[string]pin.Digest) bool { return maps.Equal(x, y) })
}

// auditPins records a change of the lock in force.
func (g *Gateway) auditPins(decision, reason string) {
	ev := &audit.Event{Action: "gateway:pins", Decision: decision, Reason: reason,
		Payload: audit.Payload{Provider: "gateway", Container: "toolgate.lock"}, Revision: g.rev.Load().ws.Revision}
	if err := g.pipe.Journal().Append(ev); err != nil {
		g.log.Error("audit append failed for a toolgate.lock change", "err", err)
	}
}

// packPins digests every command of ws's packs, by pack and command.
func packPins(ws *workspace.Workspace) (map[string]map[string]pin.Digest, error) {
	tools, err := pin.PackTools(ws)
	if err != nil {
		return nil, err
	}
	out := make(map[string]map[string]pin.Digest, len(tools))
	for pack, ts := range tools {
		m := make(map[string]pin.Digest, len(ts))
		for _, t := range ts {
			m[t.Name] = t.Digest
		}
		out[pack] = m
	}
	return out, nil
}

// pinned reports whether surface's tool with live digest may be served
// under rev, and the refusal when it may not (pin.Lock.Refusal, the one
// text the offline commands show too).
func (rev *revision) pinned(surface, tool string, live pin.Digest) (bool, error) {
	if err := rev.snap.Lock.Refusal(surface, tool, live); err != nil {
		return false, err
	}
	return true, nil
}
