package mcpserve

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
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
}

type stream struct {
	ch   chan []byte
	done chan struct{}
}

func newStream() *stream {
	return &stream{ch: make(chan []byte, streamBuffer), done: make(chan struct{})}
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

func (hs *httpSession) open(key string, st *stream) {
	hs.mu.Lock()
	hs.streams[key] = st
	hs.order = append(hs.order, st)
	hs.mu.Unlock()
}

func (hs *httpSession) release(key string, st *stream) {
	hs.mu.Lock()
	if hs.streams[key] == st {
		delete(hs.streams, key)
	}
	for i, o := range hs.order {
		if o == st {
			hs.order = append(hs.order[:i], hs.order[i+1:]...)
			break
		}
	}
	hs.mu.Unlock()
	close(st.done)
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
		_ = hs.sess.Close()
	})
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
	sid := r.Header.Get("Mcp-Session-Id")
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
	if m.Kind() == jsonrpc.KindRequest && m.Method == "initialize" && r.Header.Get("Mcp-Session-Id") == "" {
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
	key := jsonrpc.IDKey(m.ID)
	st := newStream()
	hs.open(key, st)
	defer hs.release(key, st)
	hs.sess.HandleClient(r.Context(), m)
	w.Header().Set("Mcp-Session-Id", hs.id)
	if !accepts(r, "text/event-stream") {
		e.answerJSON(w, r, hs, st, m.ID)
		return
	}
	// Until something arrives the choice is open: an answer that comes
	// first goes back as plain JSON (one write, nothing to parse as a
	// stream); anything else opens an SSE stream.
	var first []byte
	select {
	case first = <-st.ch:
	case <-r.Context().Done():
		return
	case <-hs.closed:
		return
	}
	if jsonrpc.IsResponseTo(first, m.ID) && accepts(r, "application/json") {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(first)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	pending := [][]byte{first}
	for {
		var msg []byte
		if len(pending) > 0 {
			msg, pending = pending[0], nil
		} else {
			select {
			case msg = <-st.ch:
			case <-r.Context().Done():
				return
			case <-hs.closed:
				return
			}
		}
		if !writeEvent(w, msg) {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if jsonrpc.IsResponseTo(msg, m.ID) {
			return
		}
	}
}

// answerJSON waits for the response alone; anything else the request
// causes meanwhile goes to the client's other streams.
func (e *Endpoint) answerJSON(w http.ResponseWriter, r *http.Request, hs *httpSession, st *stream, id json.RawMessage) {
	for {
		select {
		case msg := <-st.ch:
			if jsonrpc.IsResponseTo(msg, id) {
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
			writeRPCError(w, http.StatusNotFound, id, jsonrpc.CodeInvalidRequest, "session closed")
			return
		}
	}
}

func (e *Endpoint) create(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) *httpSession {
	// The cap is taken before the session starts (a stdio server's process
	// starts with it), so a flood of initializes costs nothing past it.
	e.mu.Lock()
	if max := e.opts.MaxSessions; max > 0 && len(e.sessions)+e.starting >= max {
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
	hs := &httpSession{id: newSessionID(), closed: make(chan struct{}), streams: map[string]*stream{}}
	hs.touch()
	sess, err := e.opts.Legacy(r.Context(), hs)
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

// getStream holds the client's standalone SSE stream, which carries what
// belongs to no request (list_changed, resource updates, logs).
func (e *Endpoint) getStream(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	hs := e.lookup(w, r)
	if hs == nil {
		return
	}
	st := newStream()
	hs.mu.Lock()
	if hs.get != nil {
		hs.mu.Unlock()
		http.Error(w, "this session already has a GET stream open", http.StatusConflict)
		return
	}
	hs.get = st
	backlog := hs.backlog
	hs.backlog = nil
	hs.mu.Unlock()
	defer func() {
		hs.mu.Lock()
		if hs.get == st {
			hs.get = nil
		}
		hs.mu.Unlock()
		close(st.done)
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Mcp-Session-Id", hs.id)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for _, msg := range backlog {
		if !writeEvent(w, msg) {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case msg := <-st.ch:
			if !writeEvent(w, msg) {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
			hs.touch()
		case <-r.Context().Done():
			return
		case <-hs.closed:
			return
		}
	}
}
