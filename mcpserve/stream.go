package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Resumability of a session's SSE streams (protocol 2025-11-25, SEP-1699).
// Every event toolgate writes to a client that negotiated 2025-11-25 or
// later carries an id "<stream>:<n>", unique within the session: stream 0
// is the standalone GET stream, every request stream gets the next number,
// n counts that stream's events. A request's POST stream opens with a
// priming event (an id, empty data, a retry field). Events written are
// kept (bounded) until the request's response is written; a client whose
// stream broke, or was closed for it to poll, comes back with GET and
// Last-Event-ID and gets what followed that event, then the rest of the
// stream up to the response. A request whose client went away is not
// cancelled at once: it waits ResumeGrace for the resume, then it is.
// Clients of 2025-06-18 and earlier get none of this (no ids, no priming,
// a disconnect cancels at once), as they cannot resume.
const (
	// DefaultResumeGrace is how long a request whose client went away
	// from its resumable stream waits for the client to resume it.
	DefaultResumeGrace = 30 * time.Second
	// clientRetry is the reconnection time toolgate asks for in its
	// priming events.
	clientRetry = time.Second
	// replayEvents and replayBytes bound what one stream keeps for a
	// resume; past them the oldest events go (a resume from before them
	// misses them).
	replayEvents = 256
	replayBytes  = 4 << 20
	// finishedKeep is how many answered request streams a session keeps
	// (their latest events, up to finishedBytes each) for a client whose
	// connection broke unnoticed while they were written: a write to a
	// connection the client closed can still succeed.
	finishedKeep  = 8
	finishedBytes = 1 << 20
	// takeoverWait bounds how long a resume waits for the response that
	// still writes the stream (its client gone, not yet noticed) to let go.
	takeoverWait = 5 * time.Second
	// standaloneStream numbers the GET stream's events.
	standaloneStream = 0
)

// eventID is the id of event seq of stream num.
func eventID(num, seq int64) string {
	return strconv.FormatInt(num, 10) + ":" + strconv.FormatInt(seq, 10)
}

// parseEventID splits an id eventID made; ok is false for any other text.
func parseEventID(id string) (num, seq int64, ok bool) {
	a, b, found := strings.Cut(id, ":")
	if !found {
		return 0, 0, false
	}
	num, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || num < 0 || seq < 0 {
		return 0, 0, false
	}
	return num, seq, true
}

// sentEvent is one event written, kept for a resume.
type sentEvent struct {
	seq int64
	msg []byte
}

// eventLog numbers the events of one stream and keeps the latest, within
// its bounds, for a resume.
type eventLog struct {
	num      int64
	maxN     int
	maxBytes int

	mu   sync.Mutex
	seq  int64
	kept []sentEvent
	size int
}

func newEventLog(num int64, maxN, maxBytes int) *eventLog {
	return &eventLog{num: num, maxN: maxN, maxBytes: maxBytes}
}

// record numbers msg as the next event and keeps it; it returns its id.
// It is called before the event is written, so that an event whose write
// failed is replayed too.
func (l *eventLog) record(msg []byte) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.kept = append(l.kept, sentEvent{seq: l.seq, msg: msg})
	l.size += len(msg)
	for len(l.kept) > 0 && (len(l.kept) > l.maxN || l.size > l.maxBytes) {
		l.size -= len(l.kept[0].msg)
		l.kept[0] = sentEvent{}
		l.kept = l.kept[1:]
	}
	return eventID(l.num, l.seq)
}

// last is the id of the last event recorded ("<num>:0" before any): a
// resume from it gets everything after.
func (l *eventLog) last() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return eventID(l.num, l.seq)
}

// since returns the kept events after seq, oldest first.
func (l *eventLog) since(seq int64) []sentEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []sentEvent
	for _, ev := range l.kept {
		if ev.seq > seq {
			out = append(out, ev)
		}
	}
	return out
}

// trim drops the oldest kept events until the rest fit maxBytes, and
// reports whether any is left (a finished stream keeps its response, the
// last event, if nothing else).
func (l *eventLog) trim(maxBytes int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.kept) > 0 && l.size > maxBytes {
		l.size -= len(l.kept[0].msg)
		l.kept[0] = sentEvent{}
		l.kept = l.kept[1:]
	}
	return len(l.kept) > 0
}

// stream is one SSE stream of a session: a request's (opened by its POST,
// resumed by GETs) or the standalone GET stream of one GET. Messages for
// it wait on ch until a response writing it takes them.
type stream struct {
	num    int64
	key    string          // the request's id key; "" for a GET stream
	id     json.RawMessage // the request's id
	method string          // the request's method
	log    *eventLog       // nil: the client cannot resume (no ids)
	ch     chan []byte
	done   chan struct{} // closed once the stream is released

	streamed     chan struct{} // closed once the downstream streams its answer
	streamedOnce sync.Once
	wake         chan struct{} // a pause was asked
	resumed      chan struct{} // the client resumed the stream (ClientResumed)

	attachMu sync.Mutex // serialises resumes taking the stream over
	mu       sync.Mutex
	cancel   context.CancelFunc // ends the request's context (request streams)
	writer   *attachment        // the response writing the stream; nil: detached
	gen      int64              // counts attachments; stale grace timers check it
	grace    *time.Timer
	pause    time.Duration
	primed   bool // a priming event went out: the client can resume
	finished bool // its response was written
	released bool
}

// attachment is one HTTP response writing a stream.
type attachment struct {
	stop   chan struct{} // closed: another response takes the stream over
	exited chan struct{} // closed once this one has let go
}

func newAttachment() *attachment {
	return &attachment{stop: make(chan struct{}), exited: make(chan struct{})}
}

func newStream(num int64, key string, id json.RawMessage, log *eventLog) *stream {
	return &stream{num: num, key: key, id: id, log: log, ch: make(chan []byte, streamBuffer),
		done: make(chan struct{}), streamed: make(chan struct{}), wake: make(chan struct{}, 1), resumed: make(chan struct{}, 1)}
}

// ClientResumed has a value each time the client resumes the stream
// (GET with Last-Event-ID): the downstream transport resumes the server's
// stream then rather than after the server's retry, as the client would
// have, had it spoken to the server itself.
func (st *stream) ClientResumed() <-chan struct{} { return st.resumed }

// noteResumed signals ClientResumed (at most one signal waits).
func (st *stream) noteResumed() {
	select {
	case st.resumed <- struct{}{}:
	default:
	}
}

// Streamed implements StreamHints.
func (st *stream) Streamed() { st.streamedOnce.Do(func() { close(st.streamed) }) }

// Paused implements StreamHints: only a client that can resume the
// stream has it closed for a poll; any other keeps it open (toolgate
// polls the server for it).
func (st *stream) Paused(retry time.Duration) {
	if st.log == nil {
		return
	}
	st.Streamed()
	st.mu.Lock()
	st.pause = max(retry, time.Millisecond)
	st.mu.Unlock()
	select {
	case st.wake <- struct{}{}:
	default:
	}
}

// takePause returns the retry of a pause asked for, once.
func (st *stream) takePause() (time.Duration, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	d := st.pause
	st.pause = 0
	return d, d > 0
}

func (st *stream) isStreamed() bool { return isClosed(st.streamed) }

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// attach makes a new response the stream's writer, taking it over from
// the one writing it (whose client went away unnoticed). ok is false when
// the stream has ended or the old writer does not let go in time.
func (st *stream) attach() (*attachment, bool) {
	st.attachMu.Lock()
	defer st.attachMu.Unlock()
	st.mu.Lock()
	if st.released {
		st.mu.Unlock()
		return nil, false
	}
	st.gen++
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
	old := st.writer
	st.mu.Unlock()
	if old != nil {
		close(old.stop)
		t := time.NewTimer(takeoverWait)
		defer t.Stop()
		select {
		case <-old.exited:
		case <-t.C:
			return nil, false
		}
	}
	a := newAttachment()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.released {
		return nil, false
	}
	st.gen++
	st.writer = a
	return a, true
}

// detach lets go of the stream after its writer a stopped. Unless another
// response took it over, or it ended, a resumable stream waits grace for
// its client to come back and is then abandoned (its request cancelled).
func (st *stream) detach(a *attachment, grace time.Duration, abandon func()) {
	st.mu.Lock()
	if st.writer == a {
		st.writer = nil
		if !isClosed(a.stop) && !st.released && !st.finished {
			gen := st.gen
			st.grace = time.AfterFunc(grace, func() {
				st.mu.Lock()
				idle := st.gen == gen && st.writer == nil
				st.mu.Unlock()
				if idle {
					abandon()
				}
			})
		}
	}
	st.mu.Unlock()
	close(a.exited)
}

// emit writes msg as the stream's next event, numbered when the client
// can resume.
func (st *stream) emit(w io.Writer, msg []byte) bool {
	id := ""
	if st.log != nil {
		id = st.log.record(msg)
	}
	return writeSSE(w, id, msg)
}

// writeSSE writes one SSE message event. A message is one JSON text, but
// what a server sent may hold line breaks between tokens: each line is a
// data line of its own, which the client joins again.
func writeSSE(w io.Writer, id string, msg []byte) bool {
	buf := make([]byte, 0, len(msg)+48)
	if id != "" {
		buf = append(buf, "id: "...)
		buf = append(buf, id...)
		buf = append(buf, '\n')
	}
	buf = append(buf, "event: message\n"...)
	for {
		line, rest, more := bytes.Cut(msg, []byte("\n"))
		buf = append(buf, "data: "...)
		buf = append(buf, bytes.TrimSuffix(line, []byte("\r"))...)
		buf = append(buf, '\n')
		if !more {
			break
		}
		msg = rest
	}
	buf = append(buf, '\n')
	_, err := w.Write(buf)
	return err == nil
}

// writePriming writes a priming event: the id to resume from, empty data,
// and how long to wait before reconnecting.
func writePriming(w io.Writer, id string, retry time.Duration) bool {
	_, err := io.WriteString(w, "id: "+id+"\nretry: "+strconv.FormatInt(retry.Milliseconds(), 10)+"\ndata: \n\n")
	return err == nil
}

// writeRetry sets the client's reconnection time, as a stream is closed
// for the client to poll.
func writeRetry(w io.Writer, retry time.Duration) bool {
	_, err := io.WriteString(w, "retry: "+strconv.FormatInt(max(retry.Milliseconds(), 1), 10)+"\n\n")
	return err == nil
}
