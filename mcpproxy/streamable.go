package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolgate/toolgate/jsonrpc"
	"io"
	"mime"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
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
	recv      chan Incoming
	done      chan struct{}
	err       error
	errOnce   sync.Once
	ctx       context.Context
	cancel    context.CancelFunc
	writers   sync.WaitGroup
	getOnce   sync.Once
	closeOnce sync.Once
}

func dialStreamable(cfg *Config) *streamConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &streamConn{cfg: cfg, stateless: cfg.stateless, recv: make(chan Incoming, 64), done: make(chan struct{}), ctx: ctx, cancel: cancel}
	c.sessionID.Store("")
	c.version.Store("")
	return c
}

func (c *streamConn) fail(err error) {
	c.errOnce.Do(func() {
		c.err = err
		close(c.done)
	})
}

func (c *streamConn) headers(h http.Header) {
	for k, v := range c.cfg.Headers {
		h.Set(k, v)
	}
	if c.stateless {
		return
	}
	if id := c.sessionID.Load().(string); id != "" {
		h.Set("Mcp-Session-Id", id)
	}
	if v := c.version.Load().(string); v != "" {
		h.Set("Mcp-Protocol-Version", v)
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
		c.readBody(resp, nil)
		if !c.stateless && bytes.Contains(msg, []byte(`"notifications/initialized"`)) {
			c.getOnce.Do(func() {
				c.writers.Add(1)
				go c.getLoop()
			})
		}
		return nil
	}
	pctx := c.ctx
	if c.stateless {
		var cancel context.CancelFunc
		pctx, cancel = context.WithCancel(ctx)
		stop := context.AfterFunc(c.ctx, cancel)
		c.writers.Add(1)
		go func() {
			defer c.writers.Done()
			defer stop()
			defer cancel()
			c.request(pctx, msg, id)
		}()
		return nil
	}
	c.writers.Add(1)
	go func() {
		defer c.writers.Done()
		c.request(pctx, msg, id)
	}()
	return nil
}

// request POSTs one request and delivers what comes back.
func (c *streamConn) request(ctx context.Context, msg []byte, id json.RawMessage) {
	resp, err := c.post(ctx, msg)
	if err != nil {
		if ctx.Err() == nil {
			c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(id, jsonrpc.CodeUnavailable, err.Error()), Via: id})
		}
		return
	}
	c.readBody(resp, id)
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
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && !c.stateless && c.sessionID.Load().(string) == "" {
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

// readBody delivers the messages of a POST response: one JSON message, or
// the events of an SSE stream, each marked as carried by request via.
func (c *streamConn) readBody(resp *http.Response, via json.RawMessage) {
	defer resp.Body.Close()
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	max := c.cfg.maxMessage()
	switch ct {
	case "text/event-stream":
		// The answer is held back until the server ends the stream (or
		// answerLinger passes): a server may write a notification of the
		// call just after its answer, and the client must see it first.
		var answer []byte
		var linger *time.Timer
		err := readEvents(resp.Body, max, func(ev event) bool {
			if len(bytes.TrimSpace(ev.Data)) == 0 {
				return true
			}
			if via != nil && answer == nil && jsonrpc.IsResponseTo(ev.Data, via) {
				answer = ev.Data
				linger = time.AfterFunc(answerLinger, func() { resp.Body.Close() })
				return true
			}
			c.deliver(Incoming{Msg: ev.Data, Via: via})
			return true
		})
		if linger != nil {
			linger.Stop()
		}
		if answer != nil {
			c.deliver(Incoming{Msg: answer, Via: via})
			return
		}
		if via != nil && c.ctx.Err() == nil {
			why := "the server closed the response stream without answering"
			if err != nil {
				why = err.Error()
			}
			c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q: %s", c.cfg.ID, why)), Via: via})
		}
	case "application/json":
		body, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
		if err == nil && int64(len(body)) > max {
			err = fmt.Errorf("answer larger than %d bytes", max)
		}
		if err != nil {
			if via != nil {
				c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q: %v", c.cfg.ID, err)), Via: via})
			}
			return
		}
		body = bytes.TrimSpace(body)
		if len(body) > 0 && body[0] == '[' {
			var batch []json.RawMessage
			if json.Unmarshal(body, &batch) == nil {
				for _, m := range batch {
					c.deliver(Incoming{Msg: m, Via: via})
				}
			}
			return
		}
		if len(body) > 0 {
			c.deliver(Incoming{Msg: body, Via: via})
		}
	default:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		if via != nil && c.ctx.Err() == nil {
			c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q answered with content type %q", c.cfg.ID, ct)), Via: via})
		}
	}
}

func (c *streamConn) deliver(in Incoming) {
	select {
	case c.recv <- in:
	case <-c.ctx.Done():
	}
}

// getLoop holds the GET stream for server-initiated messages, reopening it
// while the session lives; a server that does not offer one (405) is fine.
func (c *streamConn) getLoop() {
	defer c.writers.Done()
	failures := 0
	for c.ctx.Err() == nil && failures < 3 {
		req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.cfg.URL, nil)
		if err != nil {
			return
		}
		req.Header.Set("Accept", "text/event-stream")
		c.headers(req.Header)
		resp, err := httpClient(c.cfg).Do(req)
		if err != nil {
			failures++
		} else if resp.StatusCode != http.StatusOK {
			drain(resp)
			if resp.StatusCode == http.StatusMethodNotAllowed || resp.StatusCode == http.StatusNotFound {
				return
			}
			failures++
		} else {
			failures = 0
			_ = readEvents(resp.Body, c.cfg.maxMessage(), func(ev event) bool {
				if len(bytes.TrimSpace(ev.Data)) > 0 {
					c.deliver(Incoming{Msg: ev.Data})
				}
				return true
			})
			resp.Body.Close()
		}
		select {
		case <-c.ctx.Done():
		case <-time.After(time.Duration(failures+1) * 250 * time.Millisecond):
		}
	}
}

func (c *streamConn) Recv() <-chan Incoming { return c.recv }
func (c *streamConn) Done() <-chan struct{} { return c.done }
func (c *streamConn) Err() error            { return c.err }

// Close ends the downstream session: in-flight POSTs are abandoned and the
// server is told with DELETE (bounded to a few seconds).
func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.cancel()
		if sid := c.sessionID.Load().(string); sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.cfg.URL, nil)
			if err == nil {
				for k, v := range c.cfg.Headers {
					req.Header.Set(k, v)
				}
				req.Header.Set("Mcp-Session-Id", sid)
				if resp, err := httpClient(c.cfg).Do(req); err == nil {
					drain(resp)
				}
			}
			cancel()
		}
		c.writers.Wait()
		close(c.recv)
		c.fail(ErrClosed)
	})
	return nil
}
