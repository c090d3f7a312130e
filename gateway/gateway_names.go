package gateway

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"

	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// Loaded is a workspace file that passed every load-time check: its
// declarations, their compiled policy, and the lock its proxied tool names
// were checked against (nil: there is no toolgate.lock, and they were not).
type Loaded struct {
	Workspace *workspace.Workspace
	Policy    *grantcheck.Policy
	Lock      *pin.Lock
}

// LoadOptions says what CheckLocked checks a workspace's proxied tool
// names against.
type LoadOptions struct {
	// Lock returns the lock to check ws's names against (nil: none). Unset,
	// it is ReadLock of ws's file: what `toolgate check` and a starting
	// gateway read; a reload passes the lock in force.
	Lock func(ws *workspace.Workspace) (*pin.Lock, error)
	// Listed, when set, is called with what loaded and returns, per server,
	// names it lists now beyond its pins (`toolgate check` without
	// --offline: a tool added since pinning is then shown as not pinned,
	// not refused as a typo). The gateway leaves it unset.
	Listed func(ws *workspace.Workspace, policy *grantcheck.Policy, lock *pin.Lock) (map[string][]string, error)
}

// CheckLocked is the one sequence by which a workspace file is accepted:
// Check, then every proxied tool name the workspace writes (a grant, an
// effects, permission_overrides, scope_overrides or timeout_overrides key,
// an approval rule) checked against the names its server's pins list
// (grantcheck.CheckServerNames over LockedNames). `toolgate check` refuses
// a file with it, and the gateway at start and on every reload, so what
// check reports is what serve enforces. A server the lock does not pin is
// not checked (NameWarnings says which). A load error is returned as it is;
// a names error is a workspace.ErrorList at each name's position.
func CheckLocked(ctx context.Context, path string, opts LoadOptions) (Loaded, error) {
	ws, policy, err := Check(ctx, path)
	if err != nil {
		return Loaded{}, err
	}
	readLock := opts.Lock
	if readLock == nil {
		readLock = func(ws *workspace.Workspace) (*pin.Lock, error) { return ReadLock(ws.Path) }
	}
	lock, err := readLock(ws)
	if err != nil {
		return Loaded{}, err
	}
	var listed map[string][]string
	if opts.Listed != nil {
		if listed, err = opts.Listed(ws, policy, lock); err != nil {
			return Loaded{}, err
		}
	}
	if err := CheckNames(ws, lock, listed); err != nil {
		return Loaded{}, err
	}
	return Loaded{Workspace: ws, Policy: policy, Lock: lock}, nil
}

// CheckNames refuses every proxied tool name ws writes that its server
// neither pins in lock nor lists in listed (nil: none listed); nil when
// there is none, or no lock.
func CheckNames(ws *workspace.Workspace, lock *pin.Lock, listed map[string][]string) error {
	return grantcheck.CheckServerNames(ws, LockedNames(ws, lock, listed)).Err()
}

// ReadLock reads toolgate.lock beside the workspace file at wsPath: nil
// with no error when there is none. One that cannot be read or parsed is
// an error: the gateway does not start with it (the operator meant to
// pin), and a reload keeps the lock in force.
func ReadLock(wsPath string) (*pin.Lock, error) { return readLockFile(pin.PathFor(wsPath)) }

func readLockFile(path string) (*pin.Lock, error) {
	l, err := pin.Read(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w (fix it, or run `toolgate pin --update` to write it anew)", err)
	}
	return l, nil
}

// LockedNames is, per proxied server of ws that lock pins, the names of
// its pinned tools and those listed adds for it, sorted: what the
// workspace's proxied tool names are checked against. Nil without a lock.
func LockedNames(ws *workspace.Workspace, lock *pin.Lock, listed map[string][]string) map[string][]string {
	if lock == nil {
		return nil
	}
	out := map[string][]string{}
	for _, s := range ws.MCPServers {
		pins, ok := lock.Surfaces[s.ID]
		if !ok {
			continue
		}
		names := append(slices.Collect(maps.Keys(pins)), listed[s.ID]...)
		slices.Sort(names)
		out[s.ID] = slices.Compact(names)
	}
	return out
}

// NameWarnings says which proxied tool names CheckNames could not check
// under lock: all of them without a lock, a server's when the lock does
// not pin it.
func NameWarnings(ws *workspace.Workspace, lock *pin.Lock) []packs.Warning {
	if len(ws.MCPServers) == 0 {
		return nil
	}
	if lock == nil {
		return []packs.Warning{{Pos: workspace.Pos{File: ws.Path, Line: 1, Col: 1},
			Msg: fmt.Sprintf("no %s beside the workspace: the proxied tool names in grants, effects, overrides and approval rules cannot be checked, so a typo loads silently; run `toolgate pin -w %s` to record the servers' tools", pin.FileName, ws.Path)}}
	}
	var out []packs.Warning
	for _, s := range ws.MCPServers {
		if _, ok := lock.Surfaces[s.ID]; !ok {
			out = append(out, packs.Warning{Pos: s.Pos, Msg: fmt.Sprintf("server %q is not in %s: its tool names cannot be checked; run `toolgate pin -w %s --update`", s.ID, pin.FileName, ws.Path)})
		}
	}
	return out
}

// uncheckedServers are the proxied servers of ws whose tool names lock
// does not let CheckNames check, sorted.
func uncheckedServers(ws *workspace.Workspace, lock *pin.Lock) []string {
	var out []string
	for _, s := range ws.MCPServers {
		if lock != nil {
			if _, ok := lock.Surfaces[s.ID]; ok {
				continue
			}
		}
		out = append(out, s.ID)
	}
	slices.Sort(out)
	return out
}

// warnUnchecked logs the servers whose tool names a load could not check
// (the gateway's form of check's NameWarnings).
func (g *Gateway) warnUnchecked(ws *workspace.Workspace, lock *pin.Lock) {
	if ids := uncheckedServers(ws, lock); len(ids) > 0 {
		g.log.Warn("the proxied tool names of these servers are not checked: toolgate.lock does not pin them, so a misspelt grant, effects or override key loads silently; run `toolgate pin --update`",
			"servers", ids, "lock", pin.PathFor(ws.Path))
	}
}
