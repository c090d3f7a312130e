package gateway

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/pin"
	"github.com/toolgate/toolgate/workspace"
)

// Hot reload. The workspace file is read again on SIGHUP and
// when it changes on disk. A file that fails any load-time check is
// refused — logged, audited, shown in /admin/status — and the revision in
// force stays. A good file becomes a new revision, swapped in atomically:
// the next call decides with it, a call already being decided finishes
// under the revision it loaded, and approvals (bound to the revision and
// the generation the shared store numbers it with) given under the old
// file no longer let anything run — nor after a revert to it. A call held
// for approval meanwhile is decided again when it is about to run
// (callpipe's redecide).
//
// toolgate.lock is followed the same way and applies live (revision_pins.go).
//
// What a reload changes live: agents (added, removed, scopes), their
// grants and tokens, command packs (added, removed, their commands,
// templates, bounds, tiers and effects), the tiers, effects and scopes of
// MCP servers, approval rules, approvals.wait and approvals.elicitation.
// What needs a restart — applied from the file only when the process
// starts, and listed under restart_required until then: gateway.listen,
// gateway.state, gateway.audit, gateway.admin_token,
// gateway.allowed_origins, the HTTP bounds (max_body, body_timeout,
// sessions), gateway.identity, gateway.metrics, approvals.ttl and
// approvals.max_pending, credentials (their set and values) and MCP
// servers' transport (command, env, cwd, url, transport, headers,
// protocol_version, timeouts, max_output) — as well as servers added to
// the file. A reload that also changes those applies everything else and
// says which ones wait for a restart.

// Reload triggers, recorded in the status and the audit event.
const (
	ReloadSignal = "signal"
	ReloadFile   = "file"
)

// ActionReload is the audit action of a reload; its decision is
// DecisionReloaded or DecisionReloadRefused.
const (
	ActionReload          = "gateway:reload"
	DecisionReloaded      = "reloaded"
	DecisionReloadRefused = "refused"
)

// ReloadStatus is the reload part of /admin/status.
type ReloadStatus struct {
	// Revision is the workspace revision in force, LoadedAt when it was.
	Revision string    `json:"revision"`
	LoadedAt time.Time `json:"loaded_at"`
	// Generation numbers the revision in the deployment's shared store:
	// approvals given under another generation do not run under this one.
	Generation int64 `json:"generation"`
	// Reloads counts the good reloads since the process started.
	Reloads int `json:"reloads"`
	// LastAttempt and LastTrigger (signal, file) describe the last try.
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastTrigger string    `json:"last_trigger,omitempty"`
	// Error is why the last attempt was refused; "" when it was applied.
	// The revision in force is then still the previous one.
	Error string `json:"error,omitempty"`
	// RefusedRevision is the SHA-256 of the refused file.
	RefusedRevision string `json:"refused_revision,omitempty"`
	// RestartRequired lists the settings the file changes that only a
	// restart applies (see the package comment of reload.go).
	RestartRequired []string `json:"restart_required,omitempty"`
}

// reloader serialises reloads and keeps their status.
type reloader struct {
	run sync.Mutex // held for a whole reload

	mu sync.Mutex
	st ReloadStatus
}

func (r *reloader) status() ReloadStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.st
	st.RestartRequired = slices.Clone(st.RestartRequired)
	return st
}

func (r *reloader) update(f func(*ReloadStatus)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.st)
}

// Reload reads the workspace file again and, if every load-time check
// passes, makes it the revision in force; otherwise the old one stays and
// the error says why. Either way the attempt is logged, audited and shown
// in Status().Reload. trigger names the cause (ReloadSignal, ReloadFile).
func (g *Gateway) Reload(ctx context.Context, trigger string) error {
	g.reloads.run.Lock()
	defer g.reloads.run.Unlock()
	// The lock on disk first becomes the lock in force (a `pin --update`
	// made with the edit), then the file's names are checked against it.
	g.followLock(trigger == ReloadSignal)
	old := g.rev.Load()
	now := time.Now().UTC()
	next, restart, tokens, err := g.prepareReload(ctx, old)
	if err != nil {
		fileRev := fileRevision(g.ws.Path)
		g.reloads.update(func(st *ReloadStatus) {
			st.LastAttempt, st.LastTrigger, st.Error, st.RefusedRevision = now, trigger, err.Error(), fileRev
		})
		g.log.Error("workspace reload refused; the previous revision stays in force",
			"trigger", trigger, "revision", old.ws.Revision, "refused_revision", fileRev, "err", err)
		g.auditReload(DecisionReloadRefused, old.ws.Revision,
			fmt.Sprintf("workspace reload (%s) refused, revision %s stays in force: %s", trigger, short(old.ws.Revision), err))
		return err
	}
	changed := describeChanges(old.ws, next.ws)
	g.installRevision(next)
	g.metrics.DeclareWorkspace(next.ws)
	g.auth.ReplaceTokens(tokens)
	g.reloads.update(func(st *ReloadStatus) {
		st.Revision, st.LoadedAt, st.Generation, st.Reloads = next.ws.Revision, now, next.snap.Generation, st.Reloads+1
		st.LastAttempt, st.LastTrigger, st.Error, st.RefusedRevision = now, trigger, "", ""
		st.RestartRequired = restart
	})
	reason := fmt.Sprintf("workspace reloaded (%s): revision %s -> %s (generation %d -> %d)", trigger, short(old.ws.Revision), short(next.ws.Revision),
		old.snap.Generation, next.snap.Generation)
	if len(changed) > 0 {
		reason += "; changed: " + strings.Join(changed, ", ")
	} else {
		reason += "; no declaration changed"
	}
	if len(restart) > 0 {
		reason += "; needs a restart to apply: " + strings.Join(restart, ", ")
		g.log.Warn("the workspace changes settings that only a restart applies; they keep their old values until then", "settings", restart)
	}
	g.log.Info("workspace reloaded", "trigger", trigger, "revision", next.ws.Revision, "generation", next.snap.Generation, "previous", old.ws.Revision, "changed", changed)
	g.auditReload(DecisionReloaded, next.ws.Revision, reason)
	g.warnUnchecked(next.ws, next.snap.Lock)
	// The pack commands' definitions may have changed.
	g.reportPins()
	return nil
}

// prepareReload loads and checks the file — its proxied tool names
// against the lock of old, the revision in force — and builds its
// revision, the list of restart-only changes and the agents' tokens;
// nothing is swapped.
func (g *Gateway) prepareReload(ctx context.Context, old *revision) (*revision, []string, map[string]string, error) {
	loaded, err := CheckLocked(ctx, g.ws.Path, LoadOptions{Lock: func(*workspace.Workspace) (*pin.Lock, error) { return old.snap.Lock, nil }})
	if err != nil {
		return nil, nil, nil, err
	}
	ws, policy := loaded.Workspace, loaded.Policy
	creds, err := ws.ResolveCredentials(g.getenv)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("credentials: %w", err)
	}
	tokens, err := g.agentTokens(ws)
	if err != nil {
		return nil, nil, nil, err
	}
	if g.admin != nil {
		for agent, tok := range tokens {
			if g.admin.IsToken(tok) {
				return nil, nil, nil, fmt.Errorf("agent %q's token has the same value as gateway.admin_token; the admin token must be a secret of its own (an agent holding it could approve its own calls)", agent)
			}
		}
	}
	rev, err := g.buildRevision(ctx, ws, policy)
	if err != nil {
		return nil, nil, nil, err
	}
	rev.snap.Lock = loaded.Lock
	restart := restartOnly(g.ws, ws)
	if !sameCredentials(g.runner.Credentials, creds) && !slices.Contains(restart, "credentials") {
		restart = append(restart, "credentials")
	}
	return rev, restart, tokens, nil
}

// installRevision makes next the revision in force, carrying over what
// the proxied servers are known to list (a listing arriving meanwhile
// lands on whichever revision is in force when it does: the loop re-reads
// them). Replacing the revision wakes subscriptions/listen streams, which
// then tell their clients the list changed.
func (g *Gateway) installRevision(next *revision) {
	base := next.snap.Policy
	for {
		old := g.rev.Load()
		snap := *next.snap
		snap.Policy = g.withListings(base)
		if g.swapRevision(old, withLock(next, snap, old.snap.Lock)) {
			return
		}
	}
}

// withListings applies every proxied server's last listing to policy; a
// server the new file no longer declares is skipped.
func (g *Gateway) withListings(policy *grantcheck.Policy) *grantcheck.Policy {
	if g.proxy == nil {
		return policy
	}
	listings := map[string][]grantcheck.ToolInfo{}
	for id, ps := range g.proxy.servers {
		ps.mu.Lock()
		if ps.listed {
			infos := make([]grantcheck.ToolInfo, len(ps.tools))
			for i, e := range ps.tools {
				infos[i] = e.info
			}
			listings[id] = infos
		}
		ps.mu.Unlock()
	}
	policy, _ = callpipe.WithListings(policy, listings) // a refused listing was logged when it arrived
	return policy
}

// auditReload records a reload attempt. A reload is not a call: an audit
// that cannot be written is logged, and a good file still takes effect (a
// grant removed must not stay in force because the audit is down).
func (g *Gateway) auditReload(decision, rev, reason string) {
	host, _ := os.Hostname()
	ev := &audit.Event{
		Action:   ActionReload,
		Decision: decision,
		Reason:   g.runner.Redact(fmt.Sprintf("%s (pid %d on %s)", reason, os.Getpid(), host)),
		Payload:  audit.Payload{Provider: "gateway", Container: "workspace"},
		Revision: rev,
	}
	if err := g.pipe.Journal().Append(ev); err != nil {
		g.log.Error("audit append failed for a workspace reload", "err", err)
	}
}
