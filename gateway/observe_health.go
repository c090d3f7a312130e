package gateway

import (
	"net/http"
	"strings"
)

// mountHealth adds the probes a load balancer or Kubernetes asks:
//   - /healthz (readiness): 200 "ok" while this replica can decide and
//     audit calls — the shared store answers a query, and the audit is not
//     failing (with PostgreSQL the chain is in that same store, so a store
//     that answers again makes the replica ready again before any call
//     clears the audit's error); 503 with the reasons otherwise. It needs
//     no token and tells nothing but the reasons.
//   - /livez (liveness): 200 while the process serves HTTP at all, so an
//     outage of the database takes replicas out of rotation without
//     restarting them.
func (g *Gateway) mountHealth(mux *http.ServeMux) {
	mux.HandleFunc("/healthz", g.handleHealthz)
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok\n"))
	})
}

func (g *Gateway) handleHealthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if problems := g.unhealthy(r); len(problems) > 0 {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("unavailable: " + strings.Join(problems, "; ") + "\n"))
		return
	}
	_, _ = w.Write([]byte("ok\n"))
}

// unhealthy lists why this replica should not take calls now.
func (g *Gateway) unhealthy(r *http.Request) []string {
	var out []string
	storeErr := g.probeStore(r.Context())
	if storeErr != nil {
		out = append(out, "the shared store does not answer")
	}
	if failing := g.pipe.Journal().Failing(); failing != "" && (g.audit.pg == nil || storeErr != nil) {
		out = append(out, "the audit is failing: calls are refused until it can be written")
	}
	return out
}
