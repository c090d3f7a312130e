package gateway

import (
	"context"
	"os"
	"time"
)

// AuditStatus is the audit's health as the status API shows it, so an
// audit that stopped accepting events (and calls with it) is visible.
type AuditStatus struct {
	// Path is the JSONL file, or the database (postgres://user@host/db)
	// holding the chain.
	Path string `json:"path"`
	// OK is false when the last append failed or the file cannot be opened
	// for appending: calls are then refused (the audit fails closed).
	OK        bool      `json:"ok"`
	Error     string    `json:"error,omitempty"`
	ErrorAt   time.Time `json:"error_at,omitzero"`
	LastOKAt  time.Time `json:"last_ok_at,omitzero"`
	Appended  int64     `json:"appended"`
	FileBytes int64     `json:"file_bytes"`
	// Batches is how many group commits carried Appended events (their
	// ratio is the average batch).
	Batches int64 `json:"batches"`
}

func (g *Gateway) auditStatus() AuditStatus {
	h := g.pipe.Journal().Health()
	st := AuditStatus{Path: g.audit.where(), OK: h.OK, Error: h.Error, ErrorAt: h.ErrorAt, LastOKAt: h.LastOKAt, Appended: h.Appended}
	st.Batches, _ = g.audit.stats()
	if g.audit.pg != nil {
		return st
	}
	f, err := os.OpenFile(st.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		st.OK = false
		if st.Error == "" {
			st.Error = "the audit log cannot be opened for appending: " + err.Error()
		}
		return st
	}
	if fi, err := f.Stat(); err == nil {
		st.FileBytes = fi.Size()
	}
	f.Close()
	return st
}

// SurfaceStatus is one served surface.
type SurfaceStatus struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Members int    `json:"members"`
	// Listed is false for an MCP server whose tools were not enumerated.
	Listed bool `json:"listed"`
}

// Status is what GET /admin/status answers and the console shows.
type Status struct {
	Version   string `json:"version"`
	Workspace struct {
		Path     string `json:"path"`
		Revision string `json:"revision"`
	} `json:"workspace"`
	Surfaces   []SurfaceStatus    `json:"surfaces"`
	Downstream []DownstreamStatus `json:"downstream"`
	Audit      AuditStatus        `json:"audit"`
	Store      StoreStatus        `json:"store"`
	Reload     ReloadStatus       `json:"reload"`
	Approvals  struct {
		Pending     int    `json:"pending"`
		Wait        string `json:"wait"`
		TTL         string `json:"ttl"`
		Rules       int    `json:"rules"`
		Elicitation bool   `json:"elicitation"`
	} `json:"approvals"`
	Agents []string `json:"agents"`
	// Pins is toolgate.lock and the tools it keeps from being served.
	Pins PinsStatus `json:"pins"`
}

// StoreStatus is the shared store as the status API shows it.
type StoreStatus struct {
	// Kind is embedded or postgres; Where its directory or database.
	Kind  string `json:"kind"`
	Where string `json:"where"`
	// OK is false when the store did not answer: calls needing approval
	// are then refused, and with PostgreSQL every call (the audit is there).
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// Status reports the gateway's state: what it serves, the downstream
// servers' health, the workspace revision and the last reload, the
// audit's and the store's health and the approvals waiting (in the whole
// deployment).
func (g *Gateway) Status() Status {
	var st Status
	rev := g.rev.Load()
	st.Version = g.version
	st.Workspace.Path, st.Workspace.Revision = rev.ws.Path, rev.ws.Revision
	for _, s := range rev.snap.Policy.Summary().Surfaces {
		st.Surfaces = append(st.Surfaces, SurfaceStatus{ID: s.ID, Kind: string(s.Kind), Members: len(s.Members), Listed: s.Listed})
	}
	if st.Surfaces == nil {
		st.Surfaces = []SurfaceStatus{}
	}
	st.Downstream = g.downstreamHealth()
	st.Audit = g.auditStatus()
	st.Store = StoreStatus{Kind: "embedded", Where: g.store.Describe(), OK: true}
	if g.audit.pg != nil {
		st.Store.Kind = "postgres"
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeProbeTimeout)
	defer cancel()
	pending, err := g.approvals.PendingContext(ctx)
	if err != nil {
		st.Store.OK, st.Store.Error = false, err.Error()
	}
	st.Reload = g.reloads.status()
	st.Approvals.Pending = len(pending)
	st.Approvals.Wait = rev.snap.Wait.String()
	st.Approvals.TTL = g.approvals.TTL().String()
	st.Approvals.Rules = rev.snap.Rules.Len()
	st.Approvals.Elicitation = rev.snap.Elicitation
	st.Agents = rev.snap.Policy.Agents()
	st.Pins = g.pinsStatus()
	return st
}
