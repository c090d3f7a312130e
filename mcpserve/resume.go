package mcpserve

import (
	"net/http"
	"strconv"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// pumpEnd is why a stream's writer stopped.
type pumpEnd int

const (
	endAnswered pumpEnd = iota // the response was written
	endGone                    // the client went away, or a write failed
	endPaused                  // closed for the client to poll (SEP-1699)
	endKicked                  // a resume took the stream over
	endClosed                  // the session or the stream ended
)

// pump writes a request stream's messages (pending first) as SSE events
// until its response is written or it stops otherwise.
func (e *Endpoint) pump(w http.ResponseWriter, r *http.Request, hs *httpSession, st *stream, a *attachment, pending [][]byte) pumpEnd {
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()
	write := func(msg []byte) (pumpEnd, bool) {
		if !st.emit(w, msg) {
			return endGone, true
		}
		flush()
		hs.touch()
		if jsonrpc.IsResponseTo(msg, st.id) {
			hs.noteAnswer(st, msg)
			return endAnswered, true
		}
		return 0, false
	}
	for {
		for len(pending) > 0 {
			msg := pending[0]
			pending = pending[1:]
			if end, stop := write(msg); stop {
				return end
			}
		}
		if retry, ok := st.takePause(); ok {
			// What was queued before the server closed its stream goes
			// out first; the rest waits for the client's resume.
		queued:
			for {
				select {
				case msg := <-st.ch:
					if end, stop := write(msg); stop {
						return end
					}
				default:
					break queued
				}
			}
			if !writeRetry(w, retry) {
				return endGone
			}
			flush()
			return endPaused
		}
		select {
		case msg := <-st.ch:
			pending = append(pending, msg)
		case <-st.wake:
		case <-r.Context().Done():
			return endGone
		case <-a.stop:
			return endKicked
		case <-hs.closed:
			return endClosed
		case <-st.done:
			return endClosed
		}
	}
}

// settle lets go of a stream after its writer a stopped: an answered
// stream is finished; one its client may still resume waits for it
// (ResumeGrace); any other is released, cancelling its request.
func (e *Endpoint) settle(hs *httpSession, st *stream, a *attachment, end pumpEnd) {
	st.mu.Lock()
	primed := st.primed
	st.mu.Unlock()
	switch {
	case end == endAnswered:
		hs.finish(st)
	case end == endKicked:
	case (end == endGone || end == endPaused) && primed:
		// Resumable: detach starts the grace period below.
	default:
		hs.release(st)
	}
	st.detach(a, e.opts.ResumeGrace, func() {
		e.log.Debug("client did not resume its stream; request cancelled", "session", hs.id, "stream", st.num)
		hs.release(st)
	})
}

// getStream serves a GET: a resume of a request stream (Last-Event-ID
// names one of its events), else the standalone SSE stream, which carries
// what belongs to no request (list_changed, resource updates, logs).
func (e *Endpoint) getStream(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		http.Error(w, "GET needs Accept: text/event-stream", http.StatusNotAcceptable)
		return
	}
	hs := e.lookup(w, r)
	if hs == nil {
		return
	}
	release, err := e.opts.Streams.take()
	if err != nil {
		writeRPCError(w, http.StatusTooManyRequests, nil, jsonrpc.CodeInvalidRequest, err.Error())
		return
	}
	defer release()
	after, resume := int64(0), false
	if last := r.Header.Get(mcpwire.HeaderLastEventID); last != "" {
		// An id toolgate did not issue is ignored, as the header allows.
		if num, seq, ok := parseEventID(last); ok && num != standaloneStream {
			e.resumeRequest(w, r, hs, num, seq)
			return
		} else if ok {
			after, resume = seq, true
		}
	}
	e.standalone(w, r, hs, after, resume)
}

// standalone holds one connection of the GET stream; a resume first gets
// the events it missed (those still kept).
func (e *Endpoint) standalone(w http.ResponseWriter, r *http.Request, hs *httpSession, after int64, resume bool) {
	st := newStream(standaloneStream, "", nil, nil)
	hs.mu.Lock()
	if hs.get != nil {
		hs.mu.Unlock()
		http.Error(w, "this session already has a GET stream open", http.StatusConflict)
		return
	}
	if hs.resumableLocked(r) {
		if hs.getLog == nil {
			hs.getLog = newEventLog(standaloneStream, replayEvents, replayBytes)
		}
		st.log = hs.getLog
	}
	hs.get = st
	backlog := hs.backlog
	hs.backlog = nil
	hs.mu.Unlock()
	hs.listen.Listen()
	defer func() {
		hs.mu.Lock()
		if hs.get == st {
			hs.get = nil
		}
		hs.mu.Unlock()
		close(st.done)
		// What this connection did not take waits for the next one.
		for {
			select {
			case msg := <-st.ch:
				hs.mu.Lock()
				if len(hs.backlog) < backlogMax {
					hs.backlog = append(hs.backlog, msg)
				}
				hs.mu.Unlock()
			default:
				return
			}
		}
	}()
	setSSEHeaders(w)
	w.Header().Set(mcpwire.HeaderSessionID, hs.id)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if st.log != nil {
		// The priming event names where this connection starts: the
		// resume point, or the last event the stream had.
		from := st.log.last()
		if _, last, _ := parseEventID(from); resume && after < last {
			from = eventID(standaloneStream, after)
		}
		if !writePriming(w, from, clientRetry) {
			return
		}
		if resume {
			for _, ev := range st.log.since(after) {
				if !writeSSE(w, eventID(standaloneStream, ev.seq), ev.msg) {
					return
				}
			}
		}
	}
	for _, msg := range backlog {
		if !st.emit(w, msg) {
			return
		}
	}
	if flusher != nil {
		flusher.Flush()
	}
	for {
		select {
		case msg := <-st.ch:
			if !st.emit(w, msg) {
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

// resumeRequest carries request stream num on to its response on this
// GET, after replaying the events that followed seq.
func (e *Endpoint) resumeRequest(w http.ResponseWriter, r *http.Request, hs *httpSession, num, seq int64) {
	hs.mu.Lock()
	st := hs.byNum[num]
	hs.mu.Unlock()
	gone := func() {
		writeRPCError(w, http.StatusNotFound, nil, jsonrpc.CodeInvalidRequest,
			"nothing to resume: stream "+strconv.FormatInt(num, 10)+" of this session has ended (its request was cancelled) or never existed; send the request again")
	}
	if st == nil {
		gone()
		return
	}
	a, ok := st.attach()
	if !ok {
		st.mu.Lock()
		finished := st.finished
		st.mu.Unlock()
		if !finished {
			if isClosed(st.done) {
				gone()
			} else {
				http.Error(w, "the stream is still being written to another connection; retry shortly", http.StatusConflict)
			}
			return
		}
		// Answered already: replay what is kept, the response included.
		setSSEHeaders(w)
		w.WriteHeader(http.StatusOK)
		for _, ev := range st.log.since(seq) {
			if !writeSSE(w, eventID(num, ev.seq), ev.msg) {
				return
			}
		}
		return
	}
	hs.touch()
	st.noteResumed()
	setSSEHeaders(w)
	w.WriteHeader(http.StatusOK)
	for _, ev := range st.log.since(seq) {
		if !writeSSE(w, eventID(num, ev.seq), ev.msg) {
			e.settle(hs, st, a, endGone)
			return
		}
		if jsonrpc.IsResponseTo(ev.msg, st.id) {
			// The response was written before, but its write failed.
			e.settle(hs, st, a, endAnswered)
			return
		}
	}
	e.settle(hs, st, a, e.pump(w, r, hs, st, a, nil))
}
