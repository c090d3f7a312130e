package gateway

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/state"
	"github.com/toolgate/toolgate/workspace"
)

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

// auditTrail is the gateway's audit: the sink every event is appended to
// and the way to read it back for the status API, the audit query and the
// console's feed. With the embedded store it is the JSONL file beside the
// workspace; with PostgreSQL it is the chain in the database, which every
// replica extends (one transaction per group commit).
type auditTrail struct {
	sink audit.Sink
	// path is the JSONL file ("" when the chain is in PostgreSQL).
	path string
	// pg is the chain's database, nil for the file.
	pg *state.Postgres
}

// openAuditTrail opens the audit of store st as the workspace configures
// it: override (serve --audit) or gateway.audit.path for the file;
// fsync and the signing key either way; observe (nil: none) sets what
// observes it (group commits, the chain head and where it is logged).
func openAuditTrail(st state.Store, ws *workspace.Workspace, override string, getenv func(string) string, observe func(*audit.Options)) (*auditTrail, error) {
	opts, err := AuditOptions(ws, getenv)
	if err != nil {
		return nil, err
	}
	if observe != nil {
		observe(&opts)
	}
	t := &auditTrail{}
	if pg, ok := st.(*state.Postgres); ok {
		t.pg = pg
	} else {
		t.path = override
		if t.path == "" {
			t.path = AuditPath(ws)
		}
	}
	if t.sink, err = st.OpenAudit(t.path, opts); err != nil {
		return nil, fmt.Errorf("open audit log: %w", err)
	}
	return t, nil
}

// Append records ev (callpipe.Appender).
func (t *auditTrail) Append(ev *audit.Event) error { return t.sink.Append(ev) }

// AppendDeferred records a call's outcome ev, its fsync deferred where
// the sink can defer one (callpipe.DeferringAppender; the JSONL log).
func (t *auditTrail) AppendDeferred(ev *audit.Event) error {
	if d, ok := t.sink.(audit.DeferringSink); ok {
		return d.AppendDeferred(ev)
	}
	return t.sink.Append(ev)
}

// Close flushes and closes the sink.
func (t *auditTrail) Close() error { return t.sink.Close() }

// where names the audit for people: the file, or the database.
func (t *auditTrail) where() string {
	if t.pg != nil {
		return t.pg.Describe()
	}
	return t.path
}

// Tail reads the audit like audit.Tail, from the file or the chain (the
// admin API's audit query and the console's feed: admin.AuditReader).
func (t *auditTrail) Tail(ctx context.Context, opts audit.TailOptions, emit func(audit.Record) error) error {
	if t.pg != nil {
		return t.pg.TailChain(ctx, opts, emit)
	}
	return audit.Tail(ctx, t.path, opts, emit)
}

// stats reports the group commit's batches and events in this process.
func (t *auditTrail) stats() (batches, events int64) {
	if s, ok := t.sink.(interface{ Stats() (int64, int64) }); ok {
		return s.Stats()
	}
	return 0, 0
}

// storeProbeTimeout bounds the health probe of the store.
const storeProbeTimeout = 2 * time.Second

// probeStore asks the store one cheap question, so health reflects a
// database that went away even while no call arrives.
func (g *Gateway) probeStore(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
	defer cancel()
	_, err := g.store.PendingApprovals(ctx, time.Now())
	return err
}
