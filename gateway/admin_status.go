package gateway

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/audit"
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
	st.Surfaces = nonNil(st.Surfaces)
	st.Downstream = nonNil(g.downstreamHealth())
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

func (g *Gateway) handleStatus(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, g.Status())
}

// maxAuditQuery bounds how many events one audit query returns.
const maxAuditQuery = 5000

// handleAuditQuery answers GET /admin/audit?agent=&decision=&action=&since=&until=&limit=:
// the last `limit` matching events (default 100), oldest first. action
// matches exactly, or as a prefix when it ends in '*'; since and until take
// RFC 3339 times or a duration back from now (e.g. 15m).
func (g *Gateway) handleAuditQuery(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxAuditQuery {
			jsonError(w, http.StatusBadRequest, "limit must be a number from 1 to "+strconv.Itoa(maxAuditQuery))
			return
		}
		limit = n
	}
	now := time.Now()
	since, err := parseWhen(q.Get("since"), now)
	if err != nil {
		jsonError(w, http.StatusBadRequest, "since: "+err.Error())
		return
	}
	until, err := parseWhen(q.Get("until"), now)
	if err != nil {
		jsonError(w, http.StatusBadRequest, "until: "+err.Error())
		return
	}
	action := q.Get("action")
	match := func(ev *audit.Event) bool {
		switch {
		case strings.HasSuffix(action, "*") && !strings.HasPrefix(ev.Action, strings.TrimSuffix(action, "*")):
			return false
		case action != "" && !strings.HasSuffix(action, "*") && ev.Action != action:
			return false
		case !since.IsZero() && ev.Time.Before(since):
			return false
		case !until.IsZero() && ev.Time.After(until):
			return false
		}
		return true
	}
	var ring []audit.Event
	opts := audit.TailOptions{Filter: audit.Filter{Agent: q.Get("agent"), Decision: q.Get("decision")}}
	err = g.audit.tail(r.Context(), opts, func(rec audit.Record) error {
		if match(&rec.Event) {
			ring = append(ring, rec.Event)
			if len(ring) > limit {
				ring = ring[1:]
			}
		}
		return nil
	})
	if err != nil {
		jsonError(w, http.StatusInternalServerError, "read audit log: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, nonNil(ring))
}

// parseWhen reads an RFC 3339 time or a duration before now; "" is zero.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	return t, nil
}
