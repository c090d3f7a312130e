package mcpproxy

import (
	"sync"
	"time"
)

// workerIdle is how long a session keeps a goroutine that served a client
// request waiting for the next one. A call's stack grows to a few tens of
// kilobytes (decision, schema validation, audit); a fresh goroutine per
// request grows it anew each time, one copy per doubling. An idle
// session's goroutines end after this, so it holds none.
const workerIdle = time.Second

// workers runs a session's client requests, each on a goroutine of its
// own: an idle one left by an earlier request when there is one, else a
// new one.
type workers struct {
	wg   *sync.WaitGroup
	stop <-chan struct{}
	work chan func()
}

func newWorkers(wg *sync.WaitGroup, stop <-chan struct{}) *workers {
	return &workers{wg: wg, stop: stop, work: make(chan func())}
}

// run starts f on a goroutine counted in the session's WaitGroup.
func (w *workers) run(f func()) {
	select {
	case w.work <- f: // an idle worker took it
		return
	default:
	}
	w.wg.Add(1)
	go w.loop(f)
}

// loop runs f, then what run hands it, until it has waited workerIdle
// for work or the session ends.
func (w *workers) loop(f func()) {
	defer w.wg.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		idle.Reset(workerIdle)
		select {
		case f = <-w.work:
		case <-idle.C:
			return
		case <-w.stop:
			return
		}
	}
}
