// Package gateway composes the engines into the running product: it serves
// each surface to each agent over MCP (streamable HTTP or stdio), passes
// every tools/call through the grant checker, runs what is allowed, and
// writes one audit event per decision.
//
// Trust boundaries: everything arriving from an MCP client (tool names,
// arguments, headers) is untrusted and reaches the pack runner only after
// grantcheck has decided; identity comes from the bearer token (daemon) or
// is fixed at launch (per-agent instance), never from the request body.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/metrics"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/redact"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/tracing"
	"github.com/toolgate/toolgate/workspace"
)

// Options are the runtime choices that do not live in the workspace file.
type Options struct {
	// Getenv resolves credentials and agent tokens and supplies the base
	// environment of commands.
	Getenv func(string) string
	Logger *slog.Logger
	// AuditPath overrides gateway.audit.path (the embedded store only: with
	// PostgreSQL the chain lives in the database).
	AuditPath string
	// WatchEvery is how often WatchWorkspace looks at the workspace file
	// (default DefaultWatchEvery).
	WatchEvery time.Duration
}

// Gateway is one loaded workspace, ready to serve. What it decides with
// is an immutable revision swapped atomically (a downstream listing or a
// reload replaces it); per-(agent, surface) endpoints are built lazily.
//
// Every toolgate process of a deployment — daemon, per-agent HTTP and
// stdio instances, on one machine or several — opens the same store
// (gateway.state), so approvals, job records and (with PostgreSQL) the
// audit chain are shared: a call held by one process is listed, approved
// and woken from any other.
type Gateway struct {
	// ws is the workspace the process started with: what a reload cannot
	// change (listen address, store, audit, proxied servers' transport,
	// origins, bounds) stays as it says. The workspace in force for
	// grants, packs and agents is the revision's (live()).
	ws     *workspace.Workspace
	rev    atomic.Pointer[revision]
	pipe   *callpipe.Pipeline
	runner *packs.Runner
	jobs   *packs.Jobs // background jobs (gateway/jobs.go)
	store  state.Store
	audit  *auditTrail
	log    *slog.Logger
	tokens *tokenTable
	getenv func(string) string

	proxy     *proxy
	approvals *approvals.Broker
	admin     *adminAuth
	sessions  consoleSessions
	endpoints sync.Map // endpointKey → *mcpserve.Endpoint (pack surfaces)
	taskRuns  sync.Map // task id → context.CancelFunc of its resumed call
	version   string

	reloads    reloader
	watchEvery time.Duration
	jobRecs    jobRecords
	// serveURL is the daemon's base URL once it listens ("" for stdio),
	// for the approval hint.
	serveURL atomic.Pointer[string]

	// idp checks OAuth access tokens (nil without gateway.identity.jwt).
	idp *jwtIdentity
	// pins follows toolgate.lock (pins.go); the lock in force is the
	// revision's.
	pins *pinState
	// metrics and tracer: observe.go.
	metrics      *metrics.Metrics
	tracer       *tracing.Tracer
	stopWatchers func()
}

// surface is a served pack with its commands by id.
type surface struct {
	pack     *workspace.CommandPack
	commands map[string]*workspace.Command
}

// endpointKey names one agent's endpoint on one surface.
type endpointKey struct{ agent, surface string }

// Open loads the workspace at path, runs every load-time check (the file,
// requires, grants, credentials), opens the shared store and the audit.
// Any failure stops here: a gateway that starts is one whose workspace
// fully checked and whose store and audit answer.
func Open(ctx context.Context, path string, opts Options) (*Gateway, error) {
	ws, policy, err := Check(ctx, path)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	creds, err := ws.ResolveCredentials(opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	baseDir, err := filepath.Abs(filepath.Dir(ws.Path))
	if err != nil {
		return nil, fmt.Errorf("workspace directory: %w", err)
	}
	runner := packs.NewRunner(creds, opts.Getenv)
	runner.BaseDir = baseDir
	g := &Gateway{
		ws:         ws,
		runner:     runner,
		log:        redact.Logger(opts.Logger, runner.Redactor()),
		getenv:     opts.Getenv,
		watchEvery: opts.WatchEvery,
	}
	tokens := g.agentTokens(ws)
	g.tokens = newTokenTable(tokens)
	if g.idp, err = newJWTIdentity(ws, g.log); err != nil {
		return nil, err
	}
	g.pins = newPins(ws)
	if err := g.initObservability(ctx); err != nil {
		return nil, err
	}
	if g.proxy, err = newProxy(ws, creds, opts.Getenv, baseDir, g.log, g.downstreamHeaders, runner.Contain); err != nil {
		return nil, err
	}
	if g.store, err = openStore(ctx, ws, opts.Getenv); err != nil {
		return nil, err
	}
	if g.audit, err = openAuditTrail(g.store, ws, opts.AuditPath, opts.Getenv, g.metrics.AuditAppend); err != nil {
		g.store.Close()
		return nil, err
	}
	if g.audit.pg != nil && opts.AuditPath != "" {
		g.log.Warn("the audit path given is ignored: with gateway.state.postgres the audit chain lives in the database", "path", opts.AuditPath)
	}
	g.jobs = packs.NewJobs(runner, packs.JobsOptions{OnEnd: g.jobEnded})
	if err := g.initPipeline(ctx, policy); err != nil {
		g.closeStore()
		return nil, err
	}
	if err := g.initAdmin(opts.Getenv, tokens); err != nil {
		g.approvals.Close()
		g.closeStore()
		return nil, err
	}
	g.startWatchers()
	g.reportPins()
	return g, nil
}

// agentTokens resolves the bearer token of every agent that declares one;
// an agent whose token cannot be read cannot connect to the daemon.
func (g *Gateway) agentTokens(ws *workspace.Workspace) map[string]string {
	tokens := map[string]string{}
	for _, a := range ws.Agents {
		if a.Token == nil {
			continue
		}
		tok, err := a.Token.Resolve(g.getenv)
		if err != nil {
			g.log.Warn("agent token unavailable; the agent cannot connect to the daemon", "agent", a.ID, "err", err)
			continue
		}
		tokens[a.ID] = tok
	}
	return tokens
}

// StoreConfig is the store the workspace names (gateway.state), with the
// PostgreSQL DSN resolved through its SecretRef.
func StoreConfig(ws *workspace.Workspace, getenv func(string) string) (state.Config, error) {
	cfg := state.Config{Dir: ws.StateDir()}
	if pg := ws.Gateway.State.Postgres; pg != nil && pg.DSN != nil {
		dsn, err := pg.DSN.Resolve(getenv)
		if err != nil {
			return state.Config{}, fmt.Errorf("gateway.state.postgres.dsn: %w", err)
		}
		cfg.DSN = dsn
	}
	return cfg, nil
}

// openStore opens the workspace's shared store.
func openStore(ctx context.Context, ws *workspace.Workspace, getenv func(string) string) (state.Store, error) {
	cfg, err := StoreConfig(ws, getenv)
	if err != nil {
		return nil, err
	}
	st, err := state.Open(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open the shared store: %w", err)
	}
	return st, nil
}

// AuditOptions are the audit.Options the workspace asks for: fsync unless
// gateway.audit.fsync is never, and the signing key of
// gateway.audit.signing_key.
func AuditOptions(ws *workspace.Workspace, getenv func(string) string) (audit.Options, error) {
	opts := audit.Options{Fsync: ws.Gateway.Audit.Fsync != "never"}
	if ref := ws.Gateway.Audit.SigningKey; ref != nil {
		v, err := ref.Resolve(getenv)
		if err != nil {
			return opts, fmt.Errorf("gateway.audit.signing_key: %w", err)
		}
		if opts.SigningKey, err = audit.ParseSigningKey([]byte(v)); err != nil {
			return opts, fmt.Errorf("gateway.audit.signing_key: %w", err)
		}
	}
	return opts, nil
}

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

// AuditPath is where the workspace says its audit log lives, relative to
// the workspace file's directory unless absolute.
func AuditPath(ws *workspace.Workspace) string {
	p := ws.Gateway.Audit.Path
	if p == "" {
		p = "audit.jsonl"
	}
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(ws.Path), p)
}

// Workspace returns the declarations in force (the last good reload's).
func (g *Gateway) Workspace() *workspace.Workspace { return g.live() }

// Policy returns the compiled grants in force.
func (g *Gateway) Policy() *grantcheck.Policy { return g.rev.Load().snap.Policy }

// Store returns the shared store this process opened.
func (g *Gateway) Store() state.Store { return g.store }

// Close ends every MCP session, stops the background jobs (auditing their
// ends), and releases the audit and the store.
func (g *Gateway) Close() error {
	// Endpoints close in parallel: each may wait seconds for stdio
	// servers that will not exit.
	var closing sync.WaitGroup
	g.endpoints.Range(func(_, v any) bool {
		closing.Go(v.(*mcpserve.Endpoint).Close)
		return true
	})
	closing.Wait()
	g.proxy.close()
	g.closeObservability()
	g.approvals.Close()
	g.closeJobs()
	// Last: it kills whatever is still contained.
	_ = g.runner.Close()
	return g.closeStore()
}

// closeStore closes the audit, then the store it may live in.
func (g *Gateway) closeStore() error {
	var err error
	if g.audit != nil {
		err = g.audit.Close()
	}
	return errors.Join(err, g.store.Close())
}

// agentExists reports whether id names an agent of the workspace in force.
func (g *Gateway) agentExists(id string) bool {
	for _, a := range g.live().Agents {
		if a.ID == id {
			return true
		}
	}
	return false
}
