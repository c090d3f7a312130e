package mcpproxy

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
)

// The bridge's subscriptions/listen stream is reopened while its session
// lives: the wait before a reopen doubles from listenBackoffMin to
// listenBackoffMax with each stream in a row that ended (or failed to
// open) within listenStable of opening, and is listenBackoffMin again
// after one that stayed open that long.
const (
	listenBackoffMin = 100 * time.Millisecond
	listenBackoffMax = 5 * time.Second
	listenStable     = 30 * time.Second
)

// listenRequest is the subscriptions/listen params that ask for the list
// changes a legacy client hears on its GET stream, those the server's
// discovery announces (listChanged on tools, prompts, resources); nil
// when it announces none.
func listenRequest(discover json.RawMessage) json.RawMessage {
	caps := jsonrpc.Field(discover, "capabilities")
	var want jsonrpc.Fields
	for _, l := range [...]struct{ capability, filter string }{
		{"tools", "toolsListChanged"}, {"prompts", "promptsListChanged"}, {"resources", "resourcesListChanged"},
	} {
		if string(jsonrpc.Field(jsonrpc.Field(caps, l.capability), "listChanged")) == "true" {
			want = want.Set(l.filter, json.RawMessage("true"))
		}
	}
	if len(want) == 0 {
		return nil
	}
	return jsonrpc.Fields{}.Set("notifications", want.Encode()).Encode()
}

// listChanges are the notifications that announce the list changes lf
// establishes.
func (lf *listenFilter) listChanges() []string {
	var methods []string
	if lf.ToolsListChanged {
		methods = append(methods, "notifications/tools/list_changed")
	}
	if lf.PromptsListChanged {
		methods = append(methods, "notifications/prompts/list_changed")
	}
	if lf.ResourcesListChanged {
		methods = append(methods, "notifications/resources/list_changed")
	}
	return methods
}

// listen holds a subscriptions/listen stream for the session's list
// changes (those the server's discovery announces: listenRequest), which
// a legacy client expects on its GET stream, for as long as the session
// lives. A stream that ends (the server restarted or closed it, the
// connection dropped, another error) is opened again after a backoff
// (reopenDelay); the loop ends with the session's context, or for good
// when the server refuses the method (-32601: it does not serve
// subscriptions/listen, and asking every few seconds for the rest of the
// session would change nothing) or acknowledges none of the list changes
// asked for (there is nothing to hear). Either is logged once, at info.
//
// Changes the server made while no stream was open are lost, so every
// stream acknowledged after an earlier attempt counts as a change of each
// list it established: the ToolsChanged hook runs (toolgate re-lists,
// re-checks pins and grants) and the client is sent
// notifications/tools/list_changed (prompts, resources: the same, when
// established) once, so that it lists again.
func (b *Bridge) listen() {
	defer b.wg.Done()
	defer close(b.listenEnded)
	params := listenRequest(b.discover)
	if params == nil {
		b.log.Debug("the bridged server announces no list changes; not listening")
		return
	}
	var wait time.Duration
	for attempt := 0; ; attempt++ {
		openFor, why, stop := b.holdListen(params, attempt > 0)
		if b.ctx.Err() != nil {
			return
		}
		if stop {
			b.log.Info("the bridged session hears no list changes: " + why)
			return
		}
		wait = reopenDelay(wait, openFor)
		b.log.Debug("the bridge's subscriptions/listen stream ended; reopening", "why", why, "open_for", openFor.String(), "retry_in", wait.String())
		if !b.pause(wait) {
			return
		}
	}
}

// reopenDelay is the wait before reopening a stream that ended after
// staying open for openFor (0: it never opened), when the wait before it
// was last (0: none).
func reopenDelay(last, openFor time.Duration) time.Duration {
	if last == 0 || openFor >= listenStable {
		return listenBackoffMin
	}
	return min(last*2, listenBackoffMax)
}

// pause waits d, or less when the session ends (then false).
func (b *Bridge) pause(d time.Duration) bool {
	if b.listenWait != nil {
		return b.listenWait(b.ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-b.ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// holdListen holds one stream (asking params) until it ends, relaying
// its list changes to the client; after an earlier attempt (reopen) its
// acknowledgement counts as a change of each list established. It reports
// how long the stream stayed open after its acknowledgement, why it
// ended, and whether to open no other (stop).
func (b *Bridge) holdListen(params json.RawMessage, reopen bool) (openFor time.Duration, why string, stop bool) {
	var ackedAt atomic.Int64    // unix nanoseconds; 0: not acknowledged
	var established atomic.Bool // the acknowledgement established a list change
	_, rpcErr, err := b.f.Do(b.ctx, "subscriptions/listen", "", b.meta(params), func(msg []byte) {
		m, err := jsonrpc.ParseMessage(msg)
		if err != nil || m.Method == "" {
			return
		}
		if m.Method == "notifications/subscriptions/acknowledged" {
			if ackedAt.Load() != 0 {
				return
			}
			ackedAt.Store(time.Now().UnixNano())
			lf := acknowledged(m.Params, params)
			established.Store(len(lf.listChanges()) > 0)
			if reopen {
				b.missed(lf)
			}
			return
		}
		if m.Method == "notifications/tools/list_changed" && b.hooks.ToolsChanged != nil {
			b.hooks.ToolsChanged(b.ctx, nil)
		}
		b.up.Send((&jsonrpc.Message{Method: m.Method, Params: withoutMeta(m.Params)}).Encode(), nil, true)
	})
	if at := ackedAt.Load(); at != 0 {
		openFor = time.Since(time.Unix(0, at))
	}
	switch {
	case err != nil:
		return openFor, err.Error(), false
	case rpcErr != nil:
		e := jsonrpc.ParseError(rpcErr)
		return openFor, fmt.Sprintf("the server refused subscriptions/listen: %s (%d)", e.Message, e.Code), e.Code == jsonrpc.CodeMethodNotFound
	case ackedAt.Load() != 0 && !established.Load():
		return openFor, "the server establishes none of the list changes asked for on subscriptions/listen", true
	}
	return openFor, "the server ended the stream", false
}

// acknowledged is the filter a subscriptions/acknowledged notification
// (params) says the server established: the one asked (asked) when it
// says nothing.
func acknowledged(params, asked json.RawMessage) *listenFilter {
	lf := &listenFilter{}
	raw := jsonrpc.Field(params, "notifications")
	if raw == nil {
		raw = jsonrpc.Field(asked, "notifications")
	}
	_ = json.Unmarshal(raw, lf)
	return lf
}

// missed announces a change of each list lf established, for the changes
// made while no stream was open: the ToolsChanged hook first (toolgate's
// view is current when the client lists), then the client.
func (b *Bridge) missed(lf *listenFilter) {
	if lf.ToolsListChanged && b.hooks.ToolsChanged != nil {
		b.hooks.ToolsChanged(b.ctx, nil)
	}
	for _, method := range lf.listChanges() {
		b.up.Send((&jsonrpc.Message{Method: method}).Encode(), nil, true)
	}
}
