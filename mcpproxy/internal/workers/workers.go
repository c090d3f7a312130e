// Package workers runs the requests of one relay connection on goroutines
// it keeps for a while after each, so a request's stack — a few tens of
// kilobytes through the decision, the schema validation, the audit and an
// HTTP client — is not grown anew for every request (one copy per
// doubling, 5 % of a proxied call's CPU when each had a fresh goroutine).
package workers

import (
	"sync"
	"time"
)

// Idle is how long a goroutine that ran a request waits for the next one:
// long enough for a busy connection's next request (a millisecond or so
// away), short enough that sessions opened one after another do not pile
// up goroutines, each with its grown stack (the peak stays in the
// process's RSS); an idle connection holds none.
const Idle = 20 * time.Millisecond

// Pool runs each function it is given on a goroutine of its own: an idle
// one left by an earlier function when there is one, else a new one.
type Pool struct {
	wg   *sync.WaitGroup
	stop <-chan struct{}
	work chan func()
}

// New returns a pool whose goroutines are counted in wg and end when stop
// is closed (after the function they are running).
func New(wg *sync.WaitGroup, stop <-chan struct{}) *Pool {
	return &Pool{wg: wg, stop: stop, work: make(chan func())}
}

// Go starts f on a goroutine counted in the pool's WaitGroup.
func (w *Pool) Go(f func()) {
	select {
	case w.work <- f: // an idle worker took it
		return
	default:
	}
	w.wg.Add(1)
	go w.loop(f)
}

// loop runs f, then what Go hands it, until it has waited Idle for work
// or stop is closed.
func (w *Pool) loop(f func()) {
	defer w.wg.Done()
	idle := time.NewTimer(Idle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(Idle)
		select {
		case f = <-w.work:
		case <-idle.C:
			return
		case <-w.stop:
			return
		}
	}
}
