package mcpwire

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/toolgate/toolgate/jsonrpc"
)

// Requests tracks a session's in-flight client requests, so that each is
// served under a context that ends when the request's own context ends,
// when the session closes, or when the client sends notifications/cancelled
// for it. The zero value is ready to use.
type Requests struct {
	mu      sync.Mutex
	cancels map[string]context.CancelFunc
}

// Start derives the context request id is served under; done must be
// called when the request has been answered.
func (q *Requests) Start(ctx, session context.Context, id json.RawMessage) (rctx context.Context, done func()) {
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(session, cancel)
	key := jsonrpc.IDKey(id)
	q.mu.Lock()
	if q.cancels == nil {
		q.cancels = map[string]context.CancelFunc{}
	}
	q.cancels[key] = cancel
	q.mu.Unlock()
	return rctx, func() {
		q.mu.Lock()
		delete(q.cancels, key)
		q.mu.Unlock()
		stop()
		cancel()
	}
}

// Cancel ends the request the params of a notifications/cancelled name
// (by the client's requestId) and reports whether it knew it; unknown ids
// are ignored, as the protocol asks.
func (q *Requests) Cancel(params json.RawMessage) bool {
	key := jsonrpc.IDKey(jsonrpc.Field(params, "requestId"))
	q.mu.Lock()
	cancel := q.cancels[key]
	q.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}
