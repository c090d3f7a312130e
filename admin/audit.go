package admin

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/toolgate/toolgate/audit"
)

// maxAuditQuery bounds how many events one audit query returns.
const maxAuditQuery = 5000

// handleAuditQuery answers GET /admin/audit?agent=&decision=&action=&since=&until=&limit=:
// the last `limit` matching events (default 100), oldest first. action
// matches exactly, or as a prefix when it ends in '*'; since and until take
// RFC 3339 times or a duration back from now (e.g. 15m).
func (s *Server) handleAuditQuery(w http.ResponseWriter, r *http.Request) {
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
	err = s.opts.Audit.Tail(r.Context(), opts, func(rec audit.Record) error {
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
