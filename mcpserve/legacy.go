package mcpserve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// httpSession is one client session: the relay and the client's open
// streams (one per in-flight POST request, plus the optional GET stream).
type httpSession struct {
	id       string
	sess     Session
	lastUsed atomic.Int64
	closed   chan struct{}
	once     sync.Once

	mu      sync.Mutex
	streams map[string]*stream
	order   []*stream
	get     *stream
	backlog [][]byte
	// byNum are the request streams a client may resume, by number: those
	// in flight and the last few answered (finished, oldest first).
	byNum    map[int64]*stream
	finished []*stream
	nextNum  int64
	// getLog numbers the GET stream's events across its connections.
	getLog *eventLog
	// version is the protocol version initialize settled on.
	version string
	// listen tells the session when the client first opens its GET
	// stream, so that the downstream one opens then, not before.
	listen mcpwire.ListenSignal
}

func newHTTPSession() *httpSession {
	return &httpSession{id: newSessionID(), closed: make(chan struct{}), streams: map[string]*stream{}, byNum: map[int64]*stream{}}
}

// Send implements Upstream: a message goes to the stream of the request it
// belongs to, else the GET stream, else the most recent request stream,
// else it waits (bounded) for the next GET stream.
func (hs *httpSession) Send(msg []byte, route json.RawMessage, droppable bool) {
	for {
		hs.mu.Lock()
		var st *stream
		if route != nil {
			st = hs.streams[jsonrpc.IDKey(route)]
		}
		if st == nil {
			st = hs.get
		}
		if st == nil && len(hs.order) > 0 {
			st = hs.order[len(hs.order)-1]
		}
		if st == nil {
			if len(hs.backlog) < backlogMax {
				hs.backlog = append(hs.backlog, msg)
			}
			hs.mu.Unlock()
			return
		}
		hs.mu.Unlock()
		if droppable {
			select {
			case st.ch <- msg:
			default:
			}
			return
		}
		select {
		case st.ch <- msg:
			return
		case <-st.done:
			// That stream ended meanwhile; pick another.
		case <-hs.closed:
			return
		}
	}
}

// newRequestStream numbers and registers the stream of request id.
func (hs *httpSession) newRequestStream(id json.RawMessage, method string, resumable bool) *stream {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.nextNum++
	var log *eventLog
	if resumable {
		log = newEventLog(hs.nextNum, replayEvents, replayBytes)
	}
	st := newStream(hs.nextNum, jsonrpc.IDKey(id), id, log)
	st.method = method
	hs.streams[st.key] = st
	hs.order = append(hs.order, st)
	if log != nil {
		hs.byNum[st.num] = st
	}
	return st
}

// release ends a request stream: its request's context ends, and
// messages still bound for it go elsewhere. An answered stream of a
// resumable client is kept a while (bounded) for a late resume.
func (hs *httpSession) release(st *stream) {
	st.mu.Lock()
	if st.released {
		st.mu.Unlock()
		return
	}
	st.released = true
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
	finished, cancel := st.finished, st.cancel
	st.mu.Unlock()
	hs.mu.Lock()
	if hs.streams[st.key] == st {
		delete(hs.streams, st.key)
	}
	for i, o := range hs.order {
		if o == st {
			hs.order = append(hs.order[:i], hs.order[i+1:]...)
			break
		}
	}
	if hs.byNum[st.num] == st {
		if finished && st.log.trim(finishedBytes) {
			hs.finished = append(hs.finished, st)
			if len(hs.finished) > finishedKeep {
				delete(hs.byNum, hs.finished[0].num)
				hs.finished = hs.finished[1:]
			}
		} else {
			delete(hs.byNum, st.num)
		}
	}
	hs.mu.Unlock()
	close(st.done)
	if cancel != nil {
		cancel()
	}
}

// finish releases a stream whose response was written.
func (hs *httpSession) finish(st *stream) {
	st.mu.Lock()
	st.finished = true
	st.mu.Unlock()
	hs.release(st)
}

// releaseAll ends every request stream (the session ends).
func (hs *httpSession) releaseAll() {
	hs.mu.Lock()
	all := append([]*stream(nil), hs.order...)
	hs.mu.Unlock()
	for _, st := range all {
		hs.release(st)
	}
}

// resumable reports whether the client can resume streams: it negotiated
// 2025-11-25 or later (else, before initialize settled, it says so in
// MCP-Protocol-Version).
func (hs *httpSession) resumable(r *http.Request) bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.resumableLocked(r)
}

// resumableLocked is resumable with hs.mu held.
func (hs *httpSession) resumableLocked(r *http.Request) bool {
	v := hs.version
	if v == "" {
		v = r.Header.Get(mcpwire.HeaderProtocolVersion)
	}
	return mcpwire.ResumableVersion(v)
}

// noteAnswer records the version an initialize response settled on.
func (hs *httpSession) noteAnswer(st *stream, msg []byte) {
	if st.method != "initialize" {
		return
	}
	var v string
	if json.Unmarshal(jsonrpc.Field(jsonrpc.Field(msg, "result"), "protocolVersion"), &v) == nil && v != "" {
		hs.mu.Lock()
		hs.version = v
		hs.mu.Unlock()
	}
}

func (hs *httpSession) busy() bool {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return len(hs.streams) > 0
}

func (hs *httpSession) touch() { hs.lastUsed.Store(time.Now().UnixNano()) }

func (e *Endpoint) end(hs *httpSession) {
	e.mu.Lock()
	if e.sessions[hs.id] == hs {
		delete(e.sessions, hs.id)
	}
	e.mu.Unlock()
	hs.once.Do(func() {
		close(hs.closed)
		hs.releaseAll()
		_ = hs.sess.Close()
	})
}

// endBehind ends a session its client deleted without making the client
// wait: the session id is gone at once, and the session (its downstream
// server's stop: stdin closed, grace, SIGTERM, SIGKILL, reaped) ends in
// the background, bounded, and counted against MaxSessions until it has,
// so that deleting and opening sessions in a loop cannot pile up servers
// that are still stopping. Close waits for it.
func (e *Endpoint) endBehind(hs *httpSession) {
	e.mu.Lock()
	if e.closed || e.sessions[hs.id] != hs {
		e.mu.Unlock()
		e.end(hs) // ended already, or Close is ending everything
		return
	}
	delete(e.sessions, hs.id)
	e.stopping++
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		e.end(hs)
		e.mu.Lock()
		e.stopping--
		e.mu.Unlock()
	}()
}

func (e *Endpoint) startJanitor() {
	if e.opts.IdleTTL <= 0 || e.janitor != nil {
		return
	}
	stop := make(chan struct{})
	e.janitor = stop
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		tick := time.NewTicker(min(e.opts.IdleTTL/2, time.Minute))
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			cutoff := time.Now().Add(-e.opts.IdleTTL).UnixNano()
			var idle []*httpSession
			e.mu.Lock()
			for _, hs := range e.sessions {
				if hs.lastUsed.Load() < cutoff && !hs.busy() {
					idle = append(idle, hs)
				}
			}
			e.mu.Unlock()
			for _, hs := range idle {
				e.log.Debug("closing idle MCP session", "session", hs.id)
				e.end(hs)
			}
		}
	}()
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (e *Endpoint) lookup(w http.ResponseWriter, r *http.Request) *httpSession {
	sid := r.Header.Get(mcpwire.HeaderSessionID)
	if sid == "" {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "Mcp-Session-Id header required: initialize first")
		return nil
	}
	e.mu.Lock()
	hs := e.sessions[sid]
	e.mu.Unlock()
	if hs == nil {
		writeRPCError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest, "session not found (it expired or was closed): initialize again")
		return nil
	}
	hs.touch()
	return hs
}

// legacyPost serves a POST of a session-era client: initialize opens a
// session, everything else must name one (Mcp-Session-Id).
func (e *Endpoint) legacyPost(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	var hs *httpSession
	if m.Kind() == jsonrpc.KindRequest && m.Method == "initialize" && r.Header.Get(mcpwire.HeaderSessionID) == "" {
		if hs = e.create(w, r, m); hs == nil {
			return
		}
	} else if hs = e.lookup(w, r); hs == nil {
		return
	}
	if m.Kind() != jsonrpc.KindRequest {
		hs.sess.HandleClient(r.Context(), m)
		if mustBeRequest(m) {
			writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, notARequest(m))
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	sse := accepts(r, "text/event-stream")
	st := hs.newRequestStream(m.ID, m.Method, sse && hs.resumable(r))
	// The request lives as long as its stream, not its POST: a client
	// that can resume the stream may come back for it on a GET.
	ctx, cancel := context.WithCancel(mcpwire.WithStreamHints(context.WithoutCancel(r.Context()), st))
	a := newAttachment()
	st.mu.Lock()
	st.writer = a
	st.cancel = cancel
	released := st.released // the session ended meanwhile
	st.mu.Unlock()
	if released {
		cancel()
	}
	hs.sess.HandleClient(ctx, m)
	w.Header().Set(mcpwire.HeaderSessionID, hs.id)
	if !sse {
		e.answerJSON(w, r, hs, st)
		hs.release(st)
		return
	}
	// Until something arrives the choice is open: an answer that comes
	// first goes back as plain JSON (one write, nothing to parse as a
	// stream) unless the server answered toolgate with a stream; anything
	// else opens an SSE stream.
	var first []byte
	select {
	case first = <-st.ch:
	case <-st.streamed:
	case <-st.wake:
	case <-r.Context().Done():
		hs.release(st)
		return
	case <-hs.closed:
		hs.release(st)
		return
	}
	if first != nil && !st.isStreamed() && jsonrpc.IsResponseTo(first, m.ID) && accepts(r, "application/json") {
		hs.noteAnswer(st, first)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(first)
		hs.finish(st)
		return
	}
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	if st.log != nil && writePriming(w, st.log.last(), clientRetry) {
		st.mu.Lock()
		st.primed = true
		st.mu.Unlock()
	}
	var pending [][]byte
	if first != nil {
		pending = append(pending, first)
	}
	e.settle(hs, st, a, e.pump(w, r, hs, st, a, pending))
}

func setSSEHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
}

// answerJSON waits for the response alone; anything else the request
// causes meanwhile goes to the client's other streams.
func (e *Endpoint) answerJSON(w http.ResponseWriter, r *http.Request, hs *httpSession, st *stream) {
	for {
		select {
		case msg := <-st.ch:
			if jsonrpc.IsResponseTo(msg, st.id) {
				hs.noteAnswer(st, msg)
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(msg)
				return
			}
			hs.mu.Lock()
			if len(hs.backlog) < backlogMax {
				hs.backlog = append(hs.backlog, msg)
			}
			hs.mu.Unlock()
		case <-r.Context().Done():
			return
		case <-hs.closed:
			writeRPCError(w, http.StatusNotFound, st.id, jsonrpc.CodeInvalidRequest, "session closed")
			return
		}
	}
}

func (e *Endpoint) create(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) *httpSession {
	// The cap is taken before the session starts (a stdio server's process
	// starts with it), so a flood of initializes costs nothing past it.
	e.mu.Lock()
	if max := e.opts.MaxSessions; max > 0 && len(e.sessions)+e.starting+e.stopping >= max {
		e.mu.Unlock()
		writeRPCError(w, http.StatusTooManyRequests, m.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"too many open sessions for this agent on this surface (%d, gateway.sessions.max_per_agent): end one (HTTP DELETE) or let idle ones expire", max))
		return nil
	}
	e.starting++
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		e.starting--
		e.mu.Unlock()
	}()
	hs := newHTTPSession()
	hs.touch()
	sess, err := e.opts.Legacy(mcpwire.WithListen(r.Context(), &hs.listen), hs)
	if err != nil {
		e.log.Warn("mcp server unavailable for a new session", "err", err)
		writeRPCError(w, http.StatusBadGateway, m.ID, jsonrpc.CodeUnavailable, err.Error())
		return nil
	}
	hs.sess = sess
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		_ = sess.Close()
		writeRPCError(w, http.StatusServiceUnavailable, m.ID, jsonrpc.CodeUnavailable, "shutting down")
		return nil
	}
	e.sessions[hs.id] = hs
	e.startJanitor()
	e.mu.Unlock()
	return hs
}
