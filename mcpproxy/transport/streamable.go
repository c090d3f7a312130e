package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/workers"
	"github.com/toolgate/toolgate/mcpwire"
)

// answerLinger is how long a response stream is read on after it carried
// the answer, for messages the server wrote just after it.
const answerLinger = 50 * time.Millisecond

// streamConn is one streamable HTTP session with a downstream server:
// every client message is a POST; a request's answer (and whatever the
// server sends about it meanwhile) comes back as JSON or as an SSE stream;
// server-initiated messages come on an optional GET stream.
type streamConn struct {
	cfg *Config
	// stateless: the server speaks 2026-07-28 — no session id, standard
	// request headers on every POST, no GET stream, and a request is
	// cancelled by closing its POST (its context ends the HTTP request).
	stateless bool
	sessionID atomic.Value // string
	version   atomic.Value // string
	// recv is made on first use (Recv, or a message delivered without
	// Push); a pushed connection has none.
	recv     chan Incoming
	recvOnce sync.Once
	push     func(Incoming)
	ended    func()
	done     chan struct{}
	err      error
	errOnce  sync.Once
	ctx      context.Context
	cancel   context.CancelFunc
	writers  sync.WaitGroup
	// requests runs each request's POST (counted in writers).
	requests  *workers.Pool
	closeOnce sync.Once
	// The GET stream opens once the session is initialized and someone
	// listens (Listen): a session whose client has no stream of its own
	// holds no connection and no goroutine while idle. getMu orders its
	// start against Close.
	getMu       sync.Mutex
	initialized bool
	listening   bool
	getStarted  bool
	closing     bool
}

func dialStreamable(cfg *Config) *streamConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &streamConn{cfg: cfg, stateless: cfg.stateless, done: make(chan struct{}), ctx: ctx, cancel: cancel}
	c.requests = workers.New(&c.writers, ctx.Done())
	c.sessionID.Store("")
	c.version.Store("")
	return c
}

func (c *streamConn) fail(err error) {
	c.errOnce.Do(func() {
		c.err = err
		close(c.done)
		if c.ended != nil {
			// Its own goroutine: ended may Close c, which waits for the
			// writer that may be the one failing.
			go c.ended()
		}
	})
}

// Push hands every message to deliver, on the goroutine that read it (a
// request's response stream, the GET stream), instead of Recv: a session
// needs no reader of its own, and one that is idle costs no goroutine.
// ended runs once, on a goroutine of its own, when the connection has
// ended (Done is closed). It must be called before the first Send.
func (c *streamConn) Push(deliver func(Incoming), ended func()) {
	c.push, c.ended = deliver, ended
}

func (c *streamConn) recvCh() chan Incoming {
	c.recvOnce.Do(func() { c.recv = make(chan Incoming, 64) })
	return c.recv
}

func (c *streamConn) headers(h http.Header) {
	for k, v := range c.cfg.Headers {
		h.Set(k, v)
	}
	if c.stateless {
		return
	}
	if id := c.sessionID.Load().(string); id != "" {
		h.Set(mcpwire.HeaderSessionID, id)
	}
	if v := c.version.Load().(string); v != "" {
		h.Set(mcpwire.HeaderProtocolVersion, v)
	}
}

func (c *streamConn) SetProtocolVersion(v string) { c.version.Store(v) }

// Send POSTs msg. A request's answer is read in its own goroutine, so a
// long tool call does not hold up the messages after it. On a stateless
// server the POST lives as long as ctx: ending it cancels the request.
func (c *streamConn) Send(ctx context.Context, msg []byte, id json.RawMessage) error {
	select {
	case <-c.done:
		return c.err
	default:
	}
	if !jsonrpc.HasID(id) {
		// A notification's POST is bounded by ctx too: a server that never
		// answers it cannot hold the caller (cancellation has a deadline).
		nctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(c.ctx, cancel)
		defer stop()
		defer cancel()
		resp, err := c.post(nctx, msg)
		if err != nil {
			return err
		}
		c.readBody(nctx, resp, nil, nil)
		if !c.stateless && bytes.Contains(msg, []byte(`"notifications/initialized"`)) {
			c.getMu.Lock()
			c.initialized = true
			c.startGetLocked()
			c.getMu.Unlock()
		}
		return nil
	}
	hints := mcpwire.StreamHintsFrom(ctx)
	if c.stateless {
		pctx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(c.ctx, cancel)
		c.requests.Go(func() {
			defer stop()
			defer cancel()
			c.request(pctx, pctx, msg, id, hints)
		})
		return nil
	}
	// A session's POST lives as long as the connection (the request is
	// cancelled by notifications/cancelled); ctx, the request's, bounds
	// only the polling of a stream the server closed mid-call.
	c.requests.Go(func() { c.request(c.ctx, ctx, msg, id, hints) })
	return nil
}

// request POSTs one request and delivers what comes back. ctx bounds the
// POST, rctx the request (while it is polled); hints, when the client's
// transport gave some, hear how the server streams its answer.
func (c *streamConn) request(ctx, rctx context.Context, msg []byte, id json.RawMessage, hints mcpwire.StreamHints) {
	resp, err := c.post(ctx, msg)
	if err != nil {
		if ctx.Err() == nil {
			c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(id, jsonrpc.CodeUnavailable, err.Error()), Via: id})
		}
		return
	}
	c.readBody(rctx, resp, id, hints)
}

// CancelsByClosing reports whether a request is cancelled by ending its
// POST (2026-07-28) rather than by a notifications/cancelled message.
func (c *streamConn) CancelsByClosing() bool { return c.stateless }

func (c *streamConn) post(ctx context.Context, msg []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, bytes.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	c.headers(req.Header)
	if c.stateless {
		setStandardHeaders(req.Header, msg, c.cfg)
	}
	if c.cfg.RequestHeaders != nil {
		c.cfg.RequestHeaders(ctx, msg, req.Header)
	}
	resp, err := httpClient(c.cfg).Do(req)
	if err != nil {
		if c.ctx.Err() != nil {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("server %q: %w", c.cfg.ID, err)
	}
	if sid := resp.Header.Get(mcpwire.HeaderSessionID); sid != "" && !c.stateless && c.sessionID.Load().(string) == "" {
		c.sessionID.Store(sid)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound && c.sessionID.Load().(string) != "":
		drain(resp)
		err := fmt.Errorf("server %q ended the session (HTTP 404)", c.cfg.ID)
		c.fail(err)
		return nil, err
	case resp.StatusCode >= 300 && c.stateless && isJSON(resp):
		// 2026-07-28 answers header mismatches, unknown methods and
		// unsupported versions with a 4xx carrying a JSON-RPC error: that
		// error is the answer.
		return resp, nil
	case resp.StatusCode >= 300:
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, fmt.Errorf("server %q answered HTTP %s: %s", c.cfg.ID, resp.Status, bytes.TrimSpace(body))
	}
	return resp, nil
}

func isJSON(resp *http.Response) bool {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return ct == "application/json"
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// readBody delivers the messages of a POST response as they arrive: the
// JSON values of an application/json body (one message, a batch, or
// newline-delimited JSON kept open, ndjson.go), or the events of an SSE
// stream, each marked as carried by request via.
func (c *streamConn) readBody(rctx context.Context, resp *http.Response, via json.RawMessage, hints mcpwire.StreamHints) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "text/event-stream":
		if via != nil && hints != nil {
			hints.Streamed()
		}
		c.readResponseStream(rctx, resp.Body, via, hints)
	case "application/json":
		c.readJSONStream(rctx, resp.Body, via)
	default:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if via != nil && c.ctx.Err() == nil {
			c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q answered with content type %q", c.cfg.ID, ct)), Via: via})
		}
	}
}

func (c *streamConn) deliver(in Incoming) {
	if c.push != nil {
		if c.ctx.Err() == nil {
			c.push(in)
		}
		return
	}
	select {
	case c.recvCh() <- in:
	case <-c.ctx.Done():
	}
}

// Listen asks for the session's GET stream, for messages that belong to
// no request: it opens now, or once the client's notifications/initialized
// has gone out, and stays open (reopened as getLoop says) until Close. A
// stateless connection has none.
func (c *streamConn) Listen() {
	c.getMu.Lock()
	c.listening = true
	c.startGetLocked()
	c.getMu.Unlock()
}

// startGetLocked starts getLoop once both the handshake is done and
// someone listens, unless the connection is closing; c.getMu is held.
func (c *streamConn) startGetLocked() {
	if c.stateless || c.getStarted || c.closing || !c.initialized || !c.listening {
		return
	}
	c.getStarted = true
	c.writers.Add(1)
	go c.getLoop()
}

// getLoop holds the GET stream for server-initiated messages, reopening it
// while the session lives (with Last-Event-ID, so a server that keeps
// events replays what the break lost); a server that does not offer one
// (405) is fine.
func (c *streamConn) getLoop() {
	defer c.writers.Done()
	failures := 0
	cur := &sseCursor{}
	for c.ctx.Err() == nil && failures < 3 {
		req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.cfg.URL, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		c.headers(req.Header)
		if cur.lastID != "" {
			req.Header.Set(mcpwire.HeaderLastEventID, cur.lastID)
		}
		resp, err := httpClient(c.cfg).Do(req)
		switch {
		case err != nil:
			failures++
		case resp.StatusCode != http.StatusOK:
			drain(resp)
			if cur.lastID != "" {
				// Perhaps the event id is what it refuses: ask again without.
				cur.lastID = ""
				failures++
				break
			}
			if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound {
				return
			}
			failures++
		default:
			failures = 0
			_ = readEvents(resp.Body, c.cfg.MessageLimit(), func(ev event) bool {
				if ev.ID != "" {
					cur.lastID = ev.ID
				}
				if ev.HasRetry {
					cur.retry, cur.hasRetry = ev.Retry, true
				}
				if len(bytes.TrimSpace(ev.Data)) > 0 {
					c.deliver(Incoming{Msg: ev.Data})
				}
				return true
			})
			resp.Body.Close()
		}
		wait := time.Duration(failures+1) * 250 * time.Millisecond
		if cur.hasRetry && failures == 0 {
			wait = cur.wait()
		}
		select {
		case <-c.ctx.Done():
		case <-time.After(wait):
		}
	}
}

func (c *streamConn) Recv() <-chan Incoming { return c.recvCh() }
func (c *streamConn) Done() <-chan struct{} { return c.done }
func (c *streamConn) Err() error            { return c.err }

// Close ends the downstream session: in-flight POSTs are abandoned and the
// server is told with DELETE (bounded to a few seconds).
func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.getMu.Lock()
		c.closing = true
		c.getMu.Unlock()
		c.cancel()
		if sid := c.sessionID.Load().(string); sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.cfg.URL, nil)
			if err == nil {
				for k, v := range c.cfg.Headers {
					req.Header.Set(k, v)
				}
				req.Header.Set(mcpwire.HeaderSessionID, sid)
				if resp, err := httpClient(c.cfg).Do(req); err == nil {
					drain(resp)
				}
			}
			cancel()
		}
		c.writers.Wait()
		close(c.recvCh())
		c.fail(ErrClosed)
	})
	return nil
}
