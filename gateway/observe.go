package gateway

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolgate/toolgate/audit"
	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/metrics"
	"github.com/toolgate/toolgate/tracing"
)

// Observability. Metrics are fed from the hot path without a
// lock of the gateway's: a call's decision and latency through the
// pipeline's Observer (one lock-free lookup of the surface's series), the
// audit's group commits through audit.Options.OnCommit, sessions by the
// factories that open them, pending approvals from the broker's
// subscription, downstream health where the proxy probes, lists and
// restarts a server. Traces continue the caller's context (the HTTP
// traceparent header, or _meta's, which wins) through the gateway's span
// to the downstream request (its _meta and its HTTP headers).

// initObservability builds the metrics and the tracer (the process's
// OTEL_* variables, which the exporter reads; off when none is set).
func (g *Gateway) initObservability(ctx context.Context) error {
	g.metrics = metrics.New()
	g.metrics.DeclareWorkspace(g.ws)
	t, err := tracing.New(ctx, tracing.Config{ServiceVersion: g.versionString(), Logger: g.log})
	if err != nil {
		return err
	}
	g.tracer = t
	return nil
}

// startWatchers runs the background observers (pending approvals) until
// Close. They feed /metrics only, so they start with the first HTTP front
// that serves it (once): a stdio instance or a CLI never subscribes to the
// store, and so never opens its cross-process watcher.
func (g *Gateway) startWatchers() {
	g.watchOnce.Do(g.runWatchers)
}

// runWatchers is startWatchers' one run.
func (g *Gateway) runWatchers() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		g.watchPending(ctx)
	}()
	g.stopWatchers = func() {
		cancel()
		wg.Wait()
	}
}

// watchPending keeps toolgate_approvals_pending at the number of requests
// waiting in the deployment's store, re-counted on every change the
// broker announces.
func (g *Gateway) watchPending(ctx context.Context) {
	changed, stop := g.approvals.Subscribe()
	defer stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, storeProbeTimeout)
		pending, err := g.approvals.PendingContext(pctx)
		cancel()
		if err == nil {
			g.metrics.SetPendingApprovals(len(pending))
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// closeObservability flushes the spans still buffered (bounded) and stops
// the watchers.
func (g *Gateway) closeObservability() {
	g.watchOnce.Do(func() {}) // none start after Close
	if g.stopWatchers != nil {
		g.stopWatchers()
	}
	if g.tracer != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := g.tracer.Shutdown(ctx); err != nil {
			g.log.Warn("tracing: spans could not be flushed at exit", "err", err)
		}
	}
}

// callObserver turns each finished call into metrics and the decision on
// the gateway's span (callpipe.Observer).
type callObserver struct{ m *metrics.Metrics }

// CallDone implements callpipe.Observer.
func (o callObserver) CallDone(ctx context.Context, c callpipe.CallStats) {
	out := outcomeOf(c)
	s := o.m.Surface(c.Surface)
	s.Decision(out)
	s.Call(out, c.Duration)
	o.m.AgentDecision(c.Agent, c.Surface, out)
	var err error
	if c.Failed != "" {
		err = errors.New(c.Failed)
	}
	tracing.SetDecision(trace.SpanFromContext(ctx), out.String(), "", err)
}

// outcomeOf maps a call's decision and failure to the metrics outcome.
func outcomeOf(c callpipe.CallStats) metrics.Outcome {
	switch {
	case c.Decision == string(grantcheck.Approval):
		return metrics.Approval
	case c.Failed != "":
		return metrics.Error
	case c.Decision == string(grantcheck.Allow):
		return metrics.Allow
	}
	return metrics.Deny
}

// mountMetrics serves /metrics: behind the admin token unless
// gateway.metrics.open (the series name which agents' surfaces are used).
func (g *Gateway) mountMetrics(mux *http.ServeMux) {
	g.startWatchers()
	h := g.metrics.Handler()
	if g.ws.Gateway.Metrics.Open {
		mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !g.allowOrigin(r) {
				forbidOrigin(w, r)
				return
			}
			h.ServeHTTP(w, r)
		}))
		return
	}
	mux.Handle("GET /metrics", g.admin.Guard(h))
}

// observeAudit has the audit report its group commits and its head to
// the metrics, and log the head for anchoring.
func (g *Gateway) observeAudit(opts *audit.Options) {
	opts.OnCommit = g.metrics.AuditAppend
	opts.OnHead = func(a audit.Anchor, anchored bool) { g.metrics.AuditHead(a.Seq, a.Hash, anchored) }
	opts.Logger = g.log
}

// Metrics returns the gateway's metrics (its own registry).
func (g *Gateway) Metrics() *metrics.Metrics { return g.metrics }

// countSessions wraps a session factory so the sessions it opens are
// counted open until they close.
func countSessions(f mcpserve.Factory, s *metrics.Surface) mcpserve.Factory {
	return func(ctx context.Context, peer mcpwire.Peer) (mcpserve.Session, error) {
		sess, err := f(ctx, peer)
		if err != nil {
			return nil, err
		}
		s.SessionOpened()
		return &countedSession{Session: sess, s: s}, nil
	}
}

// countedSession is a session whose Close is counted once.
type countedSession struct {
	mcpserve.Session
	s    *metrics.Surface
	once sync.Once
}

func (c *countedSession) Close() error {
	err := c.Session.Close()
	c.once.Do(c.s.SessionClosed)
	return err
}

// downstreamUp records a downstream server's health from an outcome (a
// probe, a listing, a restart): up when err is nil.
func (g *Gateway) downstreamUp(server string, err error) {
	if g.metrics != nil { // nil for ListServerTools' gateway
		g.metrics.SetDownstreamUp(server, err == nil)
	}
}
