// Package metrics is toolgate's Prometheus instrumentation (docs/deploy.md):
// one registry of its own (never the global default), typed methods the
// gateway calls on the hot path, and the /metrics handler. Label values
// are bounded: surfaces and servers come from the workspace, outcomes from
// a fixed set, so no request can mint a new time series.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Outcome is how a call was decided or ended; a fixed set keeps the
// series bounded.
type Outcome uint8

// The outcomes, as they appear in the outcome label.
const (
	Allow    Outcome = iota // allowed (and, for calls, executed)
	Deny                    // refused by the pipeline (DENIED: …)
	Approval                // held for approval (pending)
	Error                   // allowed, but execution failed (timeout, downstream error, audit failure)
	numOutcomes
)

var outcomeNames = [numOutcomes]string{"allow", "deny", "approval", "error"}

// String returns the label value.
func (o Outcome) String() string {
	if o < numOutcomes {
		return outcomeNames[o]
	}
	return "error"
}

// OtherSurface is the surface label of a call naming no declared surface.
const OtherSurface = "_other"

// Bucket boundaries, in seconds or events. Calls include approval waits
// (up to approvals.wait), so the call buckets reach a minute.
var (
	callBuckets   = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}
	appendBuckets = []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1}
	batchBuckets  = []float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}
)

// Metrics holds every series toolgate exports. Safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	decisions    *prometheus.CounterVec
	calls        *prometheus.HistogramVec
	sessions     *prometheus.GaugeVec
	appendTime   prometheus.Histogram
	batchSize    prometheus.Histogram
	pending      prometheus.Gauge
	downstreamUp *prometheus.GaugeVec
	// downstreamState is 1 for each server's current state (unknown,
	// connected, failed), from the server's declaration on.
	downstreamState *prometheus.GaugeVec
	headSeq         prometheus.Gauge
	anchor          *prometheus.GaugeVec

	agentDecisions *prometheus.CounterVec
	refused        *prometheus.CounterVec
	agents         atomic.Pointer[agentTable] // read lock-free on the hot path

	anchorMu sync.Mutex // one anchor series at a time

	mu       sync.Mutex                          // serialises DeclareSurfaces; guards servers
	servers  map[string]bool                     // declared servers: true once their up series exists
	surfaces atomic.Pointer[map[string]*Surface] // read lock-free on the hot path
	other    *Surface
}

// Surface is the pre-resolved series of one surface: the gateway may keep
// it and call it without any map lookup or allocation.
type Surface struct {
	decisions [numOutcomes]prometheus.Counter
	calls     [numOutcomes]prometheus.Observer
	sessions  prometheus.Gauge
}

// New builds the metrics on a fresh registry, with the Go runtime and
// process collectors beside toolgate's own.
func New() *Metrics {
	m := &Metrics{
		reg:     prometheus.NewRegistry(),
		servers: map[string]bool{},
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_decisions_total",
			Help: "Tool calls decided, by surface and outcome (allow, deny, approval, error).",
		}, []string{"surface", "outcome"}),
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolgate_call_duration_seconds",
			Help:    "Time from a tools/call's arrival to its answer, approval waits included, by surface and outcome.",
			Buckets: callBuckets,
		}, []string{"surface", "outcome"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolgate_sessions_open",
			Help: "MCP sessions open (2025 era streams and stdio instances), by surface.",
		}, []string{"surface"}),
		appendTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolgate_audit_append_duration_seconds",
			Help:    "Time of one audit group commit (write and, with fsync: always, sync).",
			Buckets: appendBuckets,
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolgate_audit_batch_events",
			Help:    "Audit events written by one group commit.",
			Buckets: batchBuckets,
		}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolgate_approvals_pending",
			Help: "Calls waiting for an operator's approval.",
		}),
		downstreamUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolgate_downstream_up",
			Help: "Whether a downstream MCP server is reachable (1) or not (0).",
		}, []string{"server"}),
		headSeq: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolgate_audit_head_seq",
			Help: "Seq of the last audit event this process wrote (or found at open): the chain's head.",
		}),
		anchor: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolgate_audit_anchor_info",
			Help: "The audit chain head as last logged for anchoring (at checkpoints, else at most a minute after it moved): always 1, one series; keep seq:hash outside toolgate and check it with `toolgate audit verify --head SEQ:HASH`.",
		}, []string{"seq", "hash"}),
		agentDecisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_agent_decisions_total",
			Help: "Tool calls decided, by agent, surface and outcome; agents and surfaces are the workspace's declared names (anything else is _other).",
		}, []string{"agent", "surface", "outcome"}),
		downstreamState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolgate_downstream_state",
			Help: "Each declared downstream MCP server's health since start: 1 on its current state — unknown (not reached yet), connected or failed.",
		}, []string{"server", "state"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolgate_tokens_refused_total",
			Help: "Requests refused for their credentials, by endpoint (mcp, admin) and reason (no_token, unknown_token, or why a JWT failed).",
		}, []string{"endpoint", "reason"}),
	}
	m.reg.MustRegister(m.decisions, m.calls, m.sessions, m.appendTime, m.batchSize, m.pending, m.downstreamUp, m.headSeq, m.anchor, m.agentDecisions, m.refused, m.downstreamState,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.other = m.resolve(OtherSurface)
	empty := map[string]*Surface{}
	m.surfaces.Store(&empty)
	return m
}

func (m *Metrics) resolve(name string) *Surface {
	s := &Surface{sessions: m.sessions.WithLabelValues(name)}
	for o := range numOutcomes {
		s.decisions[o] = m.decisions.WithLabelValues(name, o.String())
		s.calls[o] = m.calls.WithLabelValues(name, o.String())
	}
	return s
}

// DeclareSurfaces sets the surfaces of the workspace in force (at start and
// on each reload). Their series are created at zero, so a dashboard sees
// them before the first call; series of surfaces no longer declared are
// removed.
func (m *Metrics) DeclareSurfaces(names []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.surfaces.Load()
	next := make(map[string]*Surface, len(names))
	for _, n := range names {
		if n == OtherSurface {
			continue
		}
		if s, ok := old[n]; ok {
			next[n] = s
		} else {
			next[n] = m.resolve(n)
		}
	}
	for n := range old {
		if _, ok := next[n]; !ok {
			m.decisions.DeletePartialMatch(prometheus.Labels{"surface": n})
			m.calls.DeletePartialMatch(prometheus.Labels{"surface": n})
			m.sessions.DeleteLabelValues(n)
		}
	}
	m.surfaces.Store(&next)
}

// Surface returns the series of a declared surface, or those labelled
// OtherSurface for any other name.
func (m *Metrics) Surface(name string) *Surface {
	if s, ok := (*m.surfaces.Load())[name]; ok {
		return s
	}
	return m.other
}

// Decision counts one decision.
func (s *Surface) Decision(o Outcome) { s.decisions[clamp(o)].Inc() }

// Call records one call's duration under its final outcome.
func (s *Surface) Call(o Outcome, d time.Duration) { s.calls[clamp(o)].Observe(d.Seconds()) }

// SessionOpened and SessionClosed track the open sessions of the surface.
func (s *Surface) SessionOpened() { s.sessions.Inc() }

// SessionClosed is the counterpart of SessionOpened.
func (s *Surface) SessionClosed() { s.sessions.Dec() }

func clamp(o Outcome) Outcome {
	if o >= numOutcomes {
		return Error
	}
	return o
}

// Decision counts one decision on surface (a map lookup; keep the *Surface
// to skip it).
func (m *Metrics) Decision(surface string, o Outcome) { m.Surface(surface).Decision(o) }

// Call records one call on surface.
func (m *Metrics) Call(surface string, o Outcome, d time.Duration) { m.Surface(surface).Call(o, d) }

// AuditAppend records one audit group commit: its duration and how many
// events it wrote.
func (m *Metrics) AuditAppend(d time.Duration, events int) {
	m.appendTime.Observe(d.Seconds())
	m.batchSize.Observe(float64(events))
}

// AuditHead records the audit chain's head: its seq at every commit, and
// with anchored (the head as logged for anchoring) the seq and hash as the
// labels of toolgate_audit_anchor_info. That series is replaced, never
// added to — one at a time — and changes only as often as the head is
// logged (at checkpoints, else at most once a minute), so the hash label
// churns slowly however fast the chain grows.
func (m *Metrics) AuditHead(seq int64, hash string, anchored bool) {
	m.headSeq.Set(float64(seq))
	if !anchored {
		return
	}
	m.anchorMu.Lock()
	defer m.anchorMu.Unlock()
	m.anchor.Reset()
	m.anchor.WithLabelValues(strconv.FormatInt(seq, 10), hash).Set(1)
}

// SetPendingApprovals sets the number of calls waiting for approval.
func (m *Metrics) SetPendingApprovals(n int) { m.pending.Set(float64(n)) }

// The states of toolgate_downstream_state.
const (
	StateUnknown   = "unknown"
	StateConnected = "connected"
	StateFailed    = "failed"
)

var downstreamStates = [...]string{StateUnknown, StateConnected, StateFailed}

// setStateLocked makes state the one state of server set to 1.
func (m *Metrics) setStateLocked(server, state string) {
	for _, st := range downstreamStates {
		v := 0.0
		if st == state {
			v = 1
		}
		m.downstreamState.WithLabelValues(server, st).Set(v)
	}
}

// SetDownstreamUp records whether server answers.
func (m *Metrics) SetDownstreamUp(server string, up bool) {
	v, st := 0.0, StateFailed
	if up {
		v, st = 1, StateConnected
	}
	m.mu.Lock()
	m.servers[server] = true
	m.setStateLocked(server, st)
	m.mu.Unlock()
	m.downstreamUp.WithLabelValues(server).Set(v)
}

// ForgetDownstream removes the health series of a server no longer in the
// workspace.
func (m *Metrics) ForgetDownstream(server string) {
	m.mu.Lock()
	delete(m.servers, server)
	m.downstreamState.DeletePartialMatch(prometheus.Labels{"server": server})
	m.mu.Unlock()
	m.downstreamUp.DeleteLabelValues(server)
}

// Handler serves the registry in the Prometheus text format (or what the
// scraper negotiates). The gateway decides who may reach it.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

// Registry exposes the registry, for a test or an extra collector.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }
