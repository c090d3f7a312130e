package gateway

import (
	"context"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// Check runs every load-time check of a workspace without opening anything
// for writing: the strict file load, `requires`, grant compilation and the
// approval rules. All problems are returned together as a
// workspace.ErrorList, sorted by position: when the file has load errors,
// the later checks still run on what loaded, leaving out what depends on a
// declaration that failed to load (see grantcheck.CompileLoaded), so one
// mistake is reported once and every independent one at the same time.
func Check(ctx context.Context, path string) (*workspace.Workspace, *grantcheck.Policy, error) {
	ws, err := workspace.Load(path)
	if ws == nil {
		return nil, nil, err // nothing decoded to check further
	}
	errs := workspace.AsList(err)
	// requires entries holding load errors are left out: their binary or
	// version is not what the operator meant. ws itself is not changed.
	settled := *ws
	settled.CommandPacks = make([]*workspace.CommandPack, len(ws.CommandPacks))
	for i, p := range ws.CommandPacks {
		cp := *p
		cp.Requires = nil
		for _, r := range p.Requires {
			if !r.Damaged {
				cp.Requires = append(cp.Requires, r)
			}
		}
		settled.CommandPacks[i] = &cp
	}
	errs = append(errs, packs.CheckRequires(ctx, &settled)...)
	policy, perr := grantcheck.CompileLoaded(ws)
	errs = append(errs, workspace.AsList(perr)...)
	if policy != nil {
		settled.Gateway.Approvals.Rules = policy.SettledRules(ws)
		_, rerr := approvals.CompileRules(policy, &settled)
		errs = append(errs, workspace.AsList(rerr)...)
	}
	if err := errs.Err(); err != nil {
		return nil, nil, err
	}
	return ws, policy, nil
}
