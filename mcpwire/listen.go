package mcpwire

import (
	"context"
	"sync"
)

// ListenSignal is how a client's transport that opens a stream for
// messages belonging to no request only when the client asks for one (a
// 2025 streamable HTTP client's GET) tells the session relaying it when
// the client does: a session started with one in its context (WithListen)
// needs no such stream downstream until then. A session started without
// one (a stdio client, which can always be written to) listens from the
// start. It is safe for concurrent use; the zero value is ready.
type ListenSignal struct {
	mu    sync.Mutex
	heard bool
	fn    func()
}

// OnListen makes fn what runs when the client listens: at once if it
// already has, else at the first Listen. fn must not block.
func (l *ListenSignal) OnListen(fn func()) {
	l.mu.Lock()
	l.fn = fn
	heard := l.heard
	l.mu.Unlock()
	if heard {
		fn()
	}
}

// Listen says the client opened its stream; only the first call runs the
// session's function.
func (l *ListenSignal) Listen() {
	l.mu.Lock()
	if l.heard {
		l.mu.Unlock()
		return
	}
	l.heard = true
	fn := l.fn
	l.mu.Unlock()
	if fn != nil {
		fn()
	}
}

type listenKey struct{}

// WithListen returns ctx carrying l for the session the transport starts.
func WithListen(ctx context.Context, l *ListenSignal) context.Context {
	return context.WithValue(ctx, listenKey{}, l)
}

// ListenFrom returns the signal ctx carries, nil when none: the session
// then listens from the start.
func ListenFrom(ctx context.Context) *ListenSignal {
	l, _ := ctx.Value(listenKey{}).(*ListenSignal)
	return l
}
