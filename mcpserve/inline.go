package mcpserve

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/toolgate/toolgate/jsonrpc"
)

// inlineServe is a session-era tools/call served on its POST's own
// goroutine (a Session that can, the relay, serves it inside
// HandleClient): one hand-off to another goroutine and one back fewer
// per call. Its response is written once the call is answered, unless
// the call first sends something on its stream (progress, a server
// request), streams its answer, is paused, or its client goes away: then
// a goroutine of its own writes the response at once, as it would have
// been written had the call run elsewhere, and the POST's goroutine
// waits for it after the call.
type inlineServe struct {
	state     atomic.Int32 // inlineServing, inlineSpilled or inlineAfter
	answering atomic.Bool  // the next message is the answer
	respond   func()
	wg        sync.WaitGroup
}

const (
	inlineServing int32 = iota // the call runs on the POST's goroutine
	inlineSpilled              // a goroutine of its own writes the response
	inlineAfter                // the POST's goroutine writes it, after the call
)

// spill starts writing the response on a goroutine of its own, unless
// that goroutine or the POST's already does.
func (in *inlineServe) spill() {
	if in.state.CompareAndSwap(inlineServing, inlineSpilled) {
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			in.respond()
		}()
	}
}

// finish writes the response after the call returned, or waits for the
// goroutine writing it.
func (in *inlineServe) finish() {
	if in.state.CompareAndSwap(inlineServing, inlineAfter) {
		in.respond()
		return
	}
	in.wg.Wait()
}

// serveInline hands tools/call m to the Session on this goroutine and
// responds as legacyPost does (respond). A Session that serves requests
// elsewhere returns from HandleClient at once, and the response is
// written here as for any other request.
func (e *Endpoint) serveInline(ctx context.Context, w http.ResponseWriter, r *http.Request, hs *httpSession, st *stream, a *attachment, m *jsonrpc.Message, sse bool) {
	in := &inlineServe{respond: func() { e.respond(w, r, hs, st, a, sse) }}
	st.inline.Store(in)
	stop := context.AfterFunc(r.Context(), in.spill)
	hs.sess.HandleClient(ctx, m)
	stop()
	in.finish()
}

// ServeInline implements mcpproxy.InlineHints: a request stream with an
// inlineServe may have its call served on the POST's goroutine.
func (st *stream) ServeInline() bool { return st.inline.Load() != nil }

// Answering implements mcpproxy.InlineHints: the next message on the
// stream is the call's answer, which needs no goroutine of its own.
func (st *stream) Answering() {
	if in := st.inline.Load(); in != nil {
		in.answering.Store(true)
	}
}

// sent is told of each message put on the stream: one that is not the
// answer of a call served inline starts its response at once.
func (st *stream) sent() {
	if in := st.inline.Load(); in != nil && !in.answering.Load() {
		in.spill()
	}
}

// spill starts the response of a call served inline at once (the
// downstream streams or pauses its answer).
func (st *stream) spill() {
	if in := st.inline.Load(); in != nil {
		in.spill()
	}
}
