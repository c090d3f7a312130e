// Package gateway composes the engines into the running product: it serves
// each surface to each agent over MCP (streamable HTTP or stdio), passes
// every tools/call through the grant checker, runs what is allowed, and
// writes one audit event per decision.
//
// Its files are grouped by the room they belong to: gateway_*.go opening
// and closing (the workspace check, the store and audit), call*.go the one
// tools/call entry of every surface and the results the gateway writes,
// http_*.go the HTTP front (mux, origins, body bounds, identity, the admin
// API's mount), serve.go what both transports serve, pack_*.go the command
// pack surfaces (sessions, stateless requests, the executor, background
// jobs), proxy_*.go the proxied MCP servers, revision_*.go the revision in
// force (views, reload, the file watch, pins), tasks*.go the 2026-07-28
// tasks and held calls, observe*.go metrics, traces, health and status.
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

	"github.com/toolgate/toolgate/admin"
	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/identity"
	"github.com/toolgate/toolgate/mcpproxy"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/metrics"
	"github.com/toolgate/toolgate/notify"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/pin"
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
	jobs   *packs.Jobs // background jobs (pack_jobs.go)
	store  state.Store
	audit  *auditTrail
	log    *slog.Logger
	getenv func(string) string

	// auth says which agent an HTTP request comes from (static tokens,
	// and OAuth access tokens with gateway.identity.jwt).
	auth *identity.Authenticator
	// admin serves the admin API and the operator console.
	admin *admin.Server

	proxy     *proxy
	approvals *approvals.Broker
	// notifier tells gateway.approvals.notify.webhook of held calls (nil
	// without one).
	notifier  *notify.Webhook
	endpoints sync.Map // endpointKey → *mcpserve.Endpoint
	// streams caps the long-lived client streams (gateway.streams).
	streams  *mcpserve.StreamCaps
	taskRuns sync.Map // task id → context.CancelFunc of its resumed call
	version  string

	reloads    reloader
	watchEvery time.Duration
	jobRecs    jobRecords
	// serveURL is the daemon's base URL once it listens ("" for stdio),
	// for the approval hint.
	serveURL atomic.Pointer[string]

	// pins follows toolgate.lock (revision_pins.go); the lock in force is
	// the revision's.
	pins *pinState
	// metrics and tracer: observe.go.
	metrics      *metrics.Metrics
	tracer       *tracing.Tracer
	stopWatchers func()
	watchOnce    sync.Once // starts the watchers with the first /metrics front
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
	var pins *pinState
	loaded, err := CheckLocked(ctx, path, LoadOptions{Lock: func(ws *workspace.Workspace) (*pin.Lock, error) {
		pins = newPins(ws)
		return pins.initial()
	}})
	if err != nil {
		return nil, err
	}
	ws, policy := loaded.Workspace, loaded.Policy
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
		streams:    mcpserve.NewStreamCaps(ws.Gateway.Streams.MaxPerAgentOrDefault(), ws.Gateway.Streams.MaxTotalOrDefault()),
	}
	tokens, err := g.agentTokens(ws)
	if err != nil {
		return nil, err
	}
	if g.auth, err = g.newAuthenticator(ws, tokens); err != nil {
		return nil, err
	}
	g.pins = pins
	g.warnUnchecked(ws, loaded.Lock)
	if err := g.initObservability(ctx); err != nil {
		return nil, err
	}
	if g.proxy, err = newProxy(ws, creds, opts.Getenv, baseDir, g.log, g.downstreamHeaders, runner.Contain); err != nil {
		return nil, err
	}
	if g.store, err = openStore(ctx, ws, opts.Getenv); err != nil {
		return nil, err
	}
	if g.audit, err = openAuditTrail(g.store, ws, opts.AuditPath, opts.Getenv, g.observeAudit); err != nil {
		g.store.Close()
		return nil, err
	}
	if g.audit.pg != nil && opts.AuditPath != "" {
		g.log.Warn("the audit path given is ignored: with gateway.state.postgres the audit chain lives in the database", "path", opts.AuditPath)
	}
	g.jobs = packs.NewJobs(runner, packs.JobsOptions{OnEnd: g.jobEnded})
	if err := g.initPipeline(ctx, policy, loaded.Lock); err != nil {
		g.closeStore()
		return nil, err
	}
	if err := g.initAdmin(opts.Getenv, tokens); err != nil {
		g.approvals.Close()
		g.closeStore()
		return nil, err
	}
	g.reportPins()
	return g, nil
}

// agentTokens resolves the bearer token of every agent that declares one;
// an agent whose token cannot be read cannot connect to the daemon (a
// warning: another process of the deployment may be the one that reads
// it), and a token that can be read but is too short to be a secret
// refuses the whole load.
func (g *Gateway) agentTokens(ws *workspace.Workspace) (map[string]string, error) {
	tokens := map[string]string{}
	var short []error
	for _, a := range ws.Agents {
		if a.Token == nil {
			continue
		}
		tok, err := a.Token.Resolve(g.getenv)
		if err != nil {
			g.log.Warn("agent token unavailable; the agent cannot connect to the daemon", "agent", a.ID, "err", err)
			continue
		}
		if err := a.Token.CheckToken(fmt.Sprintf("agent %q's token", a.ID), tok); err != nil {
			short = append(short, err)
			continue
		}
		tokens[a.ID] = tok
	}
	return tokens, errors.Join(short...)
}

// Workspace returns the declarations in force (the last good reload's).
func (g *Gateway) Workspace() *workspace.Workspace { return g.live() }

// Policy returns the compiled grants in force.
func (g *Gateway) Policy() *grantcheck.Policy { return g.rev.Load().snap.Policy }

// Store returns the shared store this process opened.
func (g *Gateway) Store() state.Store { return g.store }

// Approvals returns the broker of this gateway process.
func (g *Gateway) Approvals() *approvals.Broker { return g.approvals }

// SetBaseURL tells the gateway the base URL it is reached at (a daemon
// once it listens), so the approval hint can name its admin API and
// console.
func (g *Gateway) SetBaseURL(u string) { g.serveURL.Store(&u) }

// versionString is toolgate's version as it introduces itself.
func (g *Gateway) versionString() string {
	if g.version == "" {
		return "dev"
	}
	return g.version
}

// clientInfo is how toolgate introduces itself to a downstream server.
func (g *Gateway) clientInfo() mcpproxy.ClientInfo {
	return mcpproxy.ClientInfo{Name: "toolgate", Version: g.versionString()}
}

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
	if g.notifier != nil {
		g.notifier.Close() // audits what it could not deliver: before the audit closes
	}
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
