package mcpproxy

import (
	"context"
	"sync"
	"time"
)

// Backoff between attempts to list a server whose listing failed: the
// wait doubles with each failure in a row, from ListRetryMin to
// ListRetryMax.
const (
	ListRetryMin = 5 * time.Second
	ListRetryMax = time.Minute
)

// Lister paces the proxy's own listings of one server (the enumeration
// that lets server: grants cover something before a client lists). The
// first attempt runs in the caller's goroutine, which waits for it: it
// decides what the caller may see. After a failure nobody waits again: the
// next attempt is due only after a backoff, and runs in the background,
// so a server that cannot be listed (down, or hung: it answers initialize
// and then reads nothing) costs no request its listing timeout, let alone
// one per request. The zero value is ready; Close stops it. Safe for
// concurrent use.
type Lister struct {
	mu       sync.Mutex
	tried    bool // the first attempt was made (or is under way)
	running  bool // a background attempt is under way
	closed   bool
	failures int
	due      time.Time
	stop     chan struct{}
	wg       sync.WaitGroup
	// now is the clock (nil: time.Now), for tests of the backoff.
	now func() time.Time
}

func (l *Lister) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// Ensure makes an attempt with list when one is due: the first one here,
// later ones in the background (bounded by ctx's values, not its end: the
// request that found it due does not own it). list reports whether the
// server was listed; its error is the attempt's failure.
func (l *Lister) Ensure(ctx context.Context, list func(context.Context) error) {
	l.mu.Lock()
	if l.closed || l.running || (l.tried && l.clock().Before(l.due)) {
		l.mu.Unlock()
		return
	}
	first := !l.tried
	l.tried = true
	if first {
		// Later callers meanwhile go on with what is known: one waits.
		l.due = l.clock().Add(ListRetryMin)
		l.mu.Unlock()
		l.done(list(ctx))
		return
	}
	l.running = true
	if l.stop == nil {
		l.stop = make(chan struct{})
	}
	stop := l.stop
	l.wg.Add(1)
	l.mu.Unlock()
	go func() {
		defer l.wg.Done()
		bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		go func() {
			select {
			case <-stop:
				cancel()
			case <-bctx.Done():
			}
		}()
		err := list(bctx)
		l.mu.Lock()
		l.running = false
		l.mu.Unlock()
		l.done(err)
	}()
}

// done records an attempt's result and, after a failure, when the next
// one is due.
func (l *Lister) done(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.failures = 0
		l.due = time.Time{}
		return
	}
	l.failures++
	l.due = l.clock().Add(ListRetryBackoff(l.failures))
}

// ListRetryBackoff is the wait after n failed listings in a row.
func ListRetryBackoff(n int) time.Duration {
	d := ListRetryMin
	for i := 1; i < n && d < ListRetryMax; i++ {
		d *= 2
	}
	return min(d, ListRetryMax)
}

// Close cancels a background attempt, waits for it, and makes no more.
func (l *Lister) Close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	if l.stop != nil {
		close(l.stop)
	}
	l.mu.Unlock()
	l.wg.Wait()
}
