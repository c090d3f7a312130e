package jsonrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// Outbound correlates the requests toolgate itself sends to a peer (an
// elicitation to the client) with their responses. Its ids are strings
// with a prefix of their own ("tg-1", …), so they never collide with
// numeric ids a relay assigns to the requests it forwards.
type Outbound struct {
	prefix string

	mu      sync.Mutex
	next    int64
	waiting map[string]chan *Message
}

// NewOutbound returns a correlator whose ids start with prefix.
func NewOutbound(prefix string) *Outbound {
	return &Outbound{prefix: prefix, waiting: map[string]chan *Message{}}
}

// Request sends a request through send and waits for its response, ctx
// bounding the wait. The returned result is the response's result; an
// error response is returned as *RPCError.
func (o *Outbound) Request(ctx context.Context, method string, params []byte, send func(msg []byte) error) (json.RawMessage, error) {
	o.mu.Lock()
	o.next++
	id := json.RawMessage(strconv.Quote(o.prefix + strconv.FormatInt(o.next, 10)))
	ch := make(chan *Message, 1)
	o.waiting[IDKey(id)] = ch
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.waiting, IDKey(id))
		o.mu.Unlock()
	}()
	if err := send((&Message{ID: id, Method: method, Params: params}).Encode()); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			e := ParseError(m.Error)
			return nil, &e
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// Deliver hands a response to the request waiting for it and reports
// whether one was; responses to other requests are left to the caller.
func (o *Outbound) Deliver(m *Message) bool {
	o.mu.Lock()
	ch, ok := o.waiting[IDKey(m.ID)]
	if ok {
		delete(o.waiting, IDKey(m.ID))
	}
	o.mu.Unlock()
	if ok {
		ch <- m
	}
	return ok
}
