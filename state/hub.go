package state

import "sync"

// hub fans a wake-up out to subscribers without ever blocking the sender:
// each subscriber has a one-slot channel, and bursts coalesce into one.
type hub struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
	// first, when set, runs before every subscription: the embedded store
	// starts its cross-process watcher there, once, so a process nobody
	// subscribes in (a CLI, a stdio instance that answers and ends) never
	// opens one.
	first func()
}

func newHub() *hub { return &hub{subs: map[chan struct{}]struct{}{}} }

// subscribe returns the channel and the function that ends it.
func (h *hub) subscribe() (<-chan struct{}, func()) {
	if h.first != nil {
		h.first()
	}
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			h.mu.Lock()
			delete(h.subs, ch)
			h.mu.Unlock()
		})
	}
}

// wake signals every subscriber.
func (h *hub) wake() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// n is the number of subscribers.
func (h *hub) n() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
