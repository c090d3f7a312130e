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
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/packs"
	"github.com/toolgate/toolgate/workspace"
)

// Options are the runtime choices that do not live in the workspace file.
type Options struct {
	// Getenv resolves credentials and agent tokens and supplies the base
	// environment of commands.
	Getenv func(string) string
	Logger *slog.Logger
	// AuditPath overrides gateway.audit.path.
	AuditPath string
}

// Gateway is one loaded workspace, ready to serve. What it decides with
// is an immutable Snapshot swapped atomically (a downstream listing or a
// reload replaces it); per-(agent, surface) endpoints are built lazily.
type Gateway struct {
	ws     *workspace.Workspace
	rev    atomic.Pointer[revision]
	pipe   *callpipe.Pipeline
	runner *packs.Runner
	jobs   *packs.Jobs // background jobs (gateway/jobs.go)
	audit  *audit.Log
	log    *slog.Logger
	tokens *tokenTable

	surfaces  map[string]*surface
	proxy     *proxy
	approvals *approvals.Broker
	admin     *adminAuth
	sessions  consoleSessions
	endpoints sync.Map // endpointKey → *mcpserve.Endpoint (pack surfaces)
	version   string
}

// surface is a served pack with its commands by id.
type surface struct {
	pack     *workspace.CommandPack
	commands map[string]*workspace.Command
}

// endpointKey names one agent's endpoint on one surface.
type endpointKey struct{ agent, surface string }

// Open loads the workspace at path, runs every load-time check (the file,
// requires, grants, credentials) and opens the audit log. Any failure stops
// here: a gateway that starts is one whose workspace fully checked.
func Open(ctx context.Context, path string, opts Options) (*Gateway, error) {
	ws, policy, err := Check(ctx, path)
	if err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	creds, err := ws.ResolveCredentials(opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	auditPath := opts.AuditPath
	if auditPath == "" {
		auditPath = AuditPath(ws)
	}
	log, err := audit.Open(auditPath, audit.Options{Fsync: ws.Gateway.Audit.Fsync != "never"})
	if err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	baseDir, err := filepath.Abs(filepath.Dir(ws.Path))
	if err != nil {
		return nil, fmt.Errorf("workspace directory: %w", err)
	}
	runner := packs.NewRunner(creds, opts.Getenv)
	runner.BaseDir = baseDir
	g := &Gateway{
		ws:       ws,
		runner:   runner,
		audit:    log,
		log:      newRedactingLogger(opts.Logger, runner.Redact),
		surfaces: map[string]*surface{},
	}
	g.jobs = packs.NewJobs(runner, packs.JobsOptions{OnEnd: g.jobEnded})
	for _, p := range ws.CommandPacks {
		s := &surface{pack: p, commands: map[string]*workspace.Command{}}
		for _, c := range p.Commands {
			s.commands[c.ID] = c
		}
		g.surfaces[p.ID] = s
	}
	tokens := map[string]string{}
	for _, a := range ws.Agents {
		if a.Token == nil {
			continue
		}
		tok, err := a.Token.Resolve(opts.Getenv)
		if err != nil {
			g.log.Warn("agent token unavailable; the agent cannot connect to the daemon", "agent", a.ID, "err", err)
			continue
		}
		tokens[a.ID] = tok
	}
	g.tokens = newTokenTable(tokens)
	if g.proxy, err = newProxy(ws, creds, opts.Getenv, baseDir, g.log); err != nil {
		log.Close()
		return nil, err
	}
	if err := g.initPipeline(policy); err != nil {
		log.Close()
		return nil, err
	}
	if err := g.initAdmin(opts.Getenv, tokens); err != nil {
		g.approvals.Close()
		log.Close()
		return nil, err
	}
	return g, nil
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

// Workspace returns the loaded declarations.
func (g *Gateway) Workspace() *workspace.Workspace { return g.ws }

// Policy returns the compiled grants in force.
func (g *Gateway) Policy() *grantcheck.Policy { return g.rev.Load().snap.Policy }

// Close ends every MCP session and releases the audit log.
func (g *Gateway) Close() error {
	g.endpoints.Range(func(_, v any) bool {
		v.(*mcpserve.Endpoint).Close()
		return true
	})
	g.proxy.close()
	g.approvals.Close()
	g.closeJobs()
	return g.audit.Close()
}

// agentExists reports whether id names a declared agent.
func (g *Gateway) agentExists(id string) bool {
	for _, a := range g.ws.Agents {
		if a.ID == id {
			return true
		}
	}
	return false
}
