package mcpproxy

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// Eras keeps what Probe found of one server, as the protocol advises a
// client to (it does not ask again for every session), and asks again when
// that stops being true: a probe that failed is not kept, and a connection
// refused in an era the result says the server speaks (Failed) drops it,
// so the next session probes both eras afresh. Concurrent callers share
// one probe. It is safe for concurrent use.
type Eras struct {
	cfg  *transport.Config
	info ClientInfo
	// probed, when set, hears of every probe's outcome (the gateway's
	// health and log).
	probed func(era mcpwire.Era, err error)
	// minAge is how long a result is kept whatever fails: a client whose
	// handshake is refused again and again cannot make the server be
	// probed more often than this.
	minAge time.Duration

	mu  sync.Mutex
	cur *eraProbe
}

// eraProbe is one probe, done once done is closed.
type eraProbe struct {
	done     chan struct{}
	at       time.Time
	era      mcpwire.Era
	discover json.RawMessage
	err      error
}

// reprobeMin is how long a probe result is kept at least.
const reprobeMin = 2 * time.Second

// NewEras caches the probe of the server cfg describes (cfg as the
// workspace declares it; the probe makes its stateless copy itself).
// probed, when not nil, hears each probe's outcome.
func NewEras(cfg *transport.Config, info ClientInfo, probed func(era mcpwire.Era, err error)) *Eras {
	return &Eras{cfg: cfg, info: info, probed: probed, minAge: reprobeMin}
}

// Get returns the server's era and DiscoverResult (nil when it gave none),
// probing it when nothing is known; ctx bounds the wait, not the probe,
// which other callers may share.
func (e *Eras) Get(ctx context.Context) (mcpwire.Era, json.RawMessage, error) {
	e.mu.Lock()
	p := e.cur
	if p == nil {
		p = &eraProbe{done: make(chan struct{})}
		e.cur = p
		go e.probe(context.WithoutCancel(ctx), p)
	}
	e.mu.Unlock()
	select {
	case <-p.done:
		return p.era, p.discover, p.err
	case <-ctx.Done():
		return mcpwire.EraLegacy, nil, ctx.Err()
	}
}

// probe runs one probe, bounded by the longest its two questions take.
func (e *Eras) probe(ctx context.Context, p *eraProbe) {
	ctx, cancel := context.WithTimeout(ctx, 2*probeTimeout(e.cfg)+5*time.Second)
	defer cancel()
	p.era, p.discover, p.err = Probe(ctx, e.cfg, e.info)
	p.at = time.Now()
	if p.err != nil {
		e.mu.Lock()
		if e.cur == p {
			e.cur = nil // not kept: the next caller asks again
		}
		e.mu.Unlock()
	}
	// Heard before the waiters wake: what they do next (a command that
	// prints and exits) comes after the probe's report.
	if e.probed != nil {
		e.probed(p.era, p.err)
	}
	close(p.done)
}

// Failed reports that the server refused a connection in era (a legacy
// session's initialize, a stateless request's protocol version): when the
// kept result says it speaks that era, and is older than the minimum age,
// it is dropped and the next Get probes again.
func (e *Eras) Failed(era mcpwire.Era) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.cur
	if p == nil {
		return
	}
	select {
	case <-p.done:
	default:
		return // a probe is under way
	}
	if speaks(p.era, era) && time.Since(p.at) >= e.minAge {
		e.cur = nil
	}
}

// speaks reports whether a server of era have serves clients of era want
// (EraLegacy or EraModern) without a bridge.
func speaks(have, want mcpwire.Era) bool {
	return have == want || have == mcpwire.EraDual
}
