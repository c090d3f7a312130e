package callpipe

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/tiers"
)

// Definer is implemented by an executor that can name the definition of a
// tool as it stands now — the digest of its canonical definition (package
// pin) — so that an approval binds it, and a tool redefined while its call
// waits for approval does not run under an approval given for the old one.
// "" means the executor knows no definition for name.
type Definer interface {
	Definition(name string) string
}

// definitionOf is exec's definition of tool name, "" when it names none.
func definitionOf(exec Executor, name string) string {
	if d, ok := exec.(Definer); ok {
		return d.Definition(name)
	}
	return ""
}

// redecide decides an approved call once more, just before it runs,
// against the revision in force now (SEP-2848: policy is re-evaluated on
// approval). A call may have waited minutes under snap; if the workspace
// was reloaded meanwhile, a decision that now refuses it (a grant
// narrowed, the agent removed) refuses it, and an approval given under an
// older generation covers nothing under the new one. A tool whose
// definition changed since the approval was asked for (def) does not run
// either. It reports refused, with the audited refusal, when the call may
// not run; ev already records the approval it consumed.
func (p *Pipeline) redecide(ctx context.Context, snap *Snapshot, req Request, ev *audit.Event, def string) (Result, bool) {
	call := req.Call
	id := approvalID(ev)
	if cur := p.snapshot(); cur != snap {
		reloaded := fmt.Sprintf("the workspace was reloaded while the call waited for approval %s (%s → %s)", id, snap.describe(), cur.describe())
		d := decide(withSnapshot(ctx, cur), cur, req, call)
		switch {
		case d.Outcome == tiers.Deny:
			return p.refuseHeld(ctx, ev, reloaded+", and the revision in force refuses it: "+p.redactor.Redact(d.Reason)), true
		case cur.Generation != snap.Generation:
			return p.refuseHeld(ctx, ev, reloaded+": an approval covers the call only under the revision it was given in; repeat the call to have it decided under the revision in force"), true
		}
		// The same generation (a server's new listing): still granted, and
		// the approval stands unless the tool itself changed, below.
	}
	if now := definitionOf(req.Exec, call.Name); now != def {
		return p.refuseHeld(ctx, ev, fmt.Sprintf("the definition of %s:%s changed while the call waited for approval %s (%s → %s); the approval covered the old definition: repeat the call to have the new one approved",
			req.Surface, call.Name, id, orNone(def), orNone(now))), true
	}
	return Result{}, false
}

// refuseHeld refuses an approved call that may no longer run, audited
// with the approval it consumed and why.
func (p *Pipeline) refuseHeld(ctx context.Context, ev *audit.Event, reason string) Result {
	ev.Decision, ev.Reason = string(grantcheck.Deny), reason
	return p.refuse(ctx, ev, reason)
}

// approvalID is the id of the approval ev records, "" when none.
func approvalID(ev *audit.Event) string {
	var a struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(ev.Approval, &a)
	return a.ID
}

// describe names a revision for people: the start of its content hash and
// its generation.
func (s *Snapshot) describe() string {
	rev := s.Revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return fmt.Sprintf("revision %s, generation %d", rev, s.Generation)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}
