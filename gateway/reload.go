package gateway

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// Hot reload (DESIGN §11). The workspace file is read again on SIGHUP and
// when it changes on disk. A file that fails any load-time check is
// refused — logged, audited, shown in /admin/status — and the revision in
// force stays. A good file becomes a new revision, swapped in atomically:
// the next call decides with it, a call already being decided finishes
// under the revision it loaded, and approvals (bound to the revision) given
// under the old file no longer let anything run.
//
// toolgate.lock is followed the same way and applies live (pins.go).
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

// DefaultWatchEvery is how often WatchWorkspace looks at the file.
const DefaultWatchEvery = 500 * time.Millisecond

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

// Reload reads the workspace file again and, if every load-time check
// passes, makes it the revision in force; otherwise the old one stays and
// the error says why. Either way the attempt is logged, audited and shown
// in Status().Reload. trigger names the cause (ReloadSignal, ReloadFile).
func (g *Gateway) Reload(ctx context.Context, trigger string) error {
	g.reloads.run.Lock()
	defer g.reloads.run.Unlock()
	old := g.rev.Load()
	now := time.Now().UTC()
	next, restart, tokens, err := g.prepareReload(ctx)
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
	g.tokens.replace(tokens)
	g.reloads.update(func(st *ReloadStatus) {
		st.Revision, st.LoadedAt, st.Reloads = next.ws.Revision, now, st.Reloads+1
		st.LastAttempt, st.LastTrigger, st.Error, st.RefusedRevision = now, trigger, "", ""
		st.RestartRequired = restart
	})
	reason := fmt.Sprintf("workspace reloaded (%s): revision %s -> %s", trigger, short(old.ws.Revision), short(next.ws.Revision))
	if len(changed) > 0 {
		reason += "; changed: " + strings.Join(changed, ", ")
	} else {
		reason += "; no declaration changed"
	}
	if len(restart) > 0 {
		reason += "; needs a restart to apply: " + strings.Join(restart, ", ")
		g.log.Warn("the workspace changes settings that only a restart applies; they keep their old values until then", "settings", restart)
	}
	g.log.Info("workspace reloaded", "trigger", trigger, "revision", next.ws.Revision, "previous", old.ws.Revision, "changed", changed)
	g.auditReload(DecisionReloaded, next.ws.Revision, reason)
	// The pack commands' definitions may have changed, and so may the lock.
	g.checkLock(trigger == ReloadSignal)
	g.reportPins()
	return nil
}

// prepareReload loads and checks the file and builds its revision, the
// list of restart-only changes and the agents' tokens; nothing is swapped.
func (g *Gateway) prepareReload(ctx context.Context) (*revision, []string, map[string]string, error) {
	ws, policy, err := Check(ctx, g.ws.Path)
	if err != nil {
		return nil, nil, nil, err
	}
	creds, err := ws.ResolveCredentials(g.getenv)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("credentials: %w", err)
	}
	tokens := g.agentTokens(ws)
	if g.admin != nil && g.admin.off == "" {
		for agent, tok := range tokens {
			if g.admin.tokenOK(tok) {
				return nil, nil, nil, fmt.Errorf("agent %q's token has the same value as gateway.admin_token; the admin token must be a secret of its own (an agent holding it could approve its own calls)", agent)
			}
		}
	}
	rev, err := g.buildRevision(ws, policy)
	if err != nil {
		return nil, nil, nil, err
	}
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
		rev := newRevision(&snap)
		rev.ws, rev.surfaces, rev.packPins, rev.lock = next.ws, next.surfaces, next.packPins, old.lock
		if g.swapRevision(old, rev) {
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
	for _, id := range slices.Sorted(maps.Keys(g.proxy.servers)) {
		ps := g.proxy.servers[id]
		ps.mu.Lock()
		listed := ps.listed
		infos := make([]grantcheck.ToolInfo, len(ps.tools))
		for i, e := range ps.tools {
			infos[i] = e.info
		}
		ps.mu.Unlock()
		if !listed {
			continue
		}
		if np, err := policy.WithServerTools(id, infos); err == nil {
			policy = np
		}
	}
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

// WatchWorkspace reloads the workspace when its file changes, until ctx
// ends. It polls the file's identity and size and time (a stat: no file
// descriptors held, and it follows the symlink swap by which Kubernetes
// updates a mounted ConfigMap); a change is acted on once the file has
// stayed the same for one more look, so an editor's save (truncate and
// write, or write aside and rename into place) is read whole. A file
// whose content equals the revision in force, or the last one refused, is
// not tried again.
func (g *Gateway) WatchWorkspace(ctx context.Context) {
	every := g.watchEvery
	if every <= 0 {
		every = DefaultWatchEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var seen fileStamp // zero: the first look counts as a change
	pending := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		g.checkLock(false)
		st := stampOf(g.ws.Path)
		if st != seen {
			seen, pending = st, true
			continue
		}
		if !pending {
			continue
		}
		pending = false
		rev := fileRevision(g.ws.Path)
		if rev == g.rev.Load().ws.Revision || rev == g.reloads.status().RefusedRevision {
			continue
		}
		_ = g.Reload(ctx, ReloadFile)
	}
}

// fileStamp is what a stat says about the file.
type fileStamp struct {
	ok    bool
	size  int64
	mtime int64
	ino   uint64
	dev   uint64
}

// fileRevision is the SHA-256 of the file's bytes (what workspace.Load
// calls its revision), or a marker naming why it cannot be read.
func fileRevision(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// short abbreviates a revision for messages.
func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// sameCredentials compares credential values in constant time per value.
func sameCredentials(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || subtle.ConstantTimeCompare([]byte(v), []byte(w)) != 1 {
			return false
		}
	}
	return true
}

// restartOnly lists the settings next declares differently from boot (the
// file the process started with) that a reload cannot apply.
func restartOnly(boot, next *workspace.Workspace) []string {
	var out []string
	b, n := boot.Gateway, next.Gateway
	check := func(name string, x, y any) {
		if !sameDecl(x, y) {
			out = append(out, name)
		}
	}
	check("gateway.listen", b.Listen, n.Listen)
	check("gateway.state", b.State, n.State)
	check("gateway.audit", b.Audit, n.Audit)
	check("gateway.admin_token", b.AdminToken, n.AdminToken)
	check("gateway.allowed_origins", b.AllowedOrigins, n.AllowedOrigins)
	check("gateway.max_body", b.MaxBodyBytes, n.MaxBodyBytes)
	check("gateway.body_timeout", b.BodyTimeout, n.BodyTimeout)
	check("gateway.sessions", b.Sessions, n.Sessions)
	check("gateway.identity", b.Identity, n.Identity)
	check("gateway.metrics", b.Metrics, n.Metrics)
	check("gateway.approvals.ttl", b.Approvals.TTL, n.Approvals.TTL)
	check("gateway.approvals.max_pending", b.Approvals.MaxPending, n.Approvals.MaxPending)
	check("credentials", boot.Credentials, next.Credentials)
	servers := map[string]*workspace.MCPServer{}
	for _, sv := range boot.MCPServers {
		servers[sv.ID] = sv
	}
	for _, sv := range next.MCPServers {
		was, ok := servers[sv.ID]
		switch {
		case !ok:
			out = append(out, "mcp_servers."+sv.ID+" (added)")
		case !sameDecl(transportOf(was), transportOf(sv)):
			out = append(out, "mcp_servers."+sv.ID+" (transport)")
		}
	}
	return out
}

// transportOf is a server's declaration without what the policy compiles
// (tiers, effects, scopes): how toolgate reaches it. Any field not named
// here counts as transport, so a new one defaults to needing a restart.
func transportOf(sv *workspace.MCPServer) workspace.MCPServer {
	c := *sv
	c.Description, c.Permission, c.PermissionOverrides, c.Effects = "", "", nil, nil
	c.TrustAnnotations, c.Scopes, c.ScopeOverrides = false, nil, nil
	return c
}

// describeChanges names the live parts of the workspace that differ.
func describeChanges(a, b *workspace.Workspace) []string {
	var out []string
	ids := func(n int, id func(int) string) map[string]int {
		m := make(map[string]int, n)
		for i := range n {
			m[id(i)] = i
		}
		return m
	}
	diff := func(kind string, x, y map[string]int, same func(i, j int) bool) {
		for _, id := range slices.Sorted(maps.Keys(y)) {
			i, ok := x[id]
			switch {
			case !ok:
				out = append(out, kind+" "+id+" added")
			case !same(i, y[id]):
				out = append(out, kind+" "+id+" changed")
			}
		}
		for _, id := range slices.Sorted(maps.Keys(x)) {
			if _, ok := y[id]; !ok {
				out = append(out, kind+" "+id+" removed")
			}
		}
	}
	diff("agent", ids(len(a.Agents), func(i int) string { return a.Agents[i].ID }),
		ids(len(b.Agents), func(i int) string { return b.Agents[i].ID }),
		func(i, j int) bool { return sameDecl(a.Agents[i], b.Agents[j]) })
	diff("pack", ids(len(a.CommandPacks), func(i int) string { return a.CommandPacks[i].ID }),
		ids(len(b.CommandPacks), func(i int) string { return b.CommandPacks[i].ID }),
		func(i, j int) bool { return sameDecl(a.CommandPacks[i], b.CommandPacks[j]) })
	diff("server", ids(len(a.MCPServers), func(i int) string { return a.MCPServers[i].ID }),
		ids(len(b.MCPServers), func(i int) string { return b.MCPServers[i].ID }),
		func(i, j int) bool { return sameDecl(a.MCPServers[i], b.MCPServers[j]) })
	ra, rb := a.Gateway.Approvals, b.Gateway.Approvals
	if !sameDecl(ra.Rules, rb.Rules) {
		out = append(out, "approval rules")
	}
	if ra.Wait != rb.Wait || ra.Elicitation != rb.Elicitation {
		out = append(out, "approvals.wait/elicitation")
	}
	return out
}

// sameDecl compares two declarations ignoring where they were written
// (Pos fields, and lists and maps of them), so moving a line is no change.
func sameDecl(a, b any) bool {
	return equalDecl(reflect.ValueOf(a), reflect.ValueOf(b))
}

var posType = reflect.TypeFor[workspace.Pos]()

// positional reports whether t holds nothing but positions.
func positional(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Pointer:
		return positional(t.Elem())
	}
	return t == posType
}

func equalDecl(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return equalDecl(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			f := a.Type().Field(i)
			if positional(f.Type) {
				continue
			}
			if !equalDecl(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equalDecl(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.Len() != b.Len() {
			return false
		}
		it := a.MapRange()
		for it.Next() {
			v := b.MapIndex(it.Key())
			if !v.IsValid() || !equalDecl(it.Value(), v) {
				return false
			}
		}
		return true
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		return a.IsNil() && b.IsNil()
	}
	// Basic kinds; unexported fields are compared by value too.
	switch a.Kind() {
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return a.Float() == b.Float()
	case reflect.String:
		return a.String() == b.String()
	}
	return false
}
