package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// Polling (SEP-1699, protocol 2025-11-25): a server may end a request's
// SSE stream before it answers, once it has sent an event id, and expects
// the client to come back with GET and Last-Event-ID after the retry time
// it asked for. toolgate does so for the client; the client's transport
// hears of it (StreamHints.Paused) so it can close the client's stream the
// same way.
const (
	// defaultPollRetry is the wait before a resume when the server asked
	// for none; minPollRetry the shortest taken from one, so a server that
	// asks for no wait is not polled in a tight loop.
	defaultPollRetry = time.Second
	minPollRetry     = 10 * time.Millisecond
)

// sseCursor is where a response stream stands: the last event id the
// server gave and the reconnection time it asked for.
type sseCursor struct {
	lastID   string
	retry    time.Duration
	hasRetry bool
}

// wait is the time to wait before resuming.
func (c *sseCursor) wait() time.Duration {
	if !c.hasRetry {
		return defaultPollRetry
	}
	return max(c.retry, minPollRetry)
}

// readResponseStream delivers a request's SSE response, resuming it while
// the server closes it unanswered (a stateless server's streams are not
// resumable: there, an unanswered end fails the request).
func (c *streamConn) readResponseStream(rctx context.Context, body io.ReadCloser, via json.RawMessage, hints mcpwire.StreamHints) {
	cur := &sseCursor{}
	answer, err := c.readStream(body, via, cur)
	var back <-chan struct{} // the client resumed its own stream
	if b, ok := hints.(clientResumes); ok {
		back = b.ClientResumed()
	}
	for answer == nil && err == nil && via != nil && cur.lastID != "" && !c.stateless {
		if hints != nil {
			hints.Paused(cur.wait())
		}
		t := time.NewTimer(cur.wait())
		select {
		case <-t.C:
		case <-back:
			// The client is back before the server's retry passed (a
			// client may come back at once, as the suite does): toolgate
			// resumes on its behalf when it would have itself.
			t.Stop()
		case <-rctx.Done():
			t.Stop()
			return // nobody waits for the answer any more
		case <-c.ctx.Done():
			t.Stop()
			return
		}
		var resumed io.ReadCloser
		if resumed, err = c.resume(rctx, cur.lastID); err != nil {
			break
		}
		answer, err = c.readStream(resumed, via, cur)
		resumed.Close()
	}
	if answer != nil {
		c.deliver(Incoming{Msg: answer, Via: via})
		return
	}
	if via != nil && c.ctx.Err() == nil && rctx.Err() == nil {
		why := "the server closed the response stream without answering"
		if err != nil {
			why = err.Error()
		}
		c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q: %s", c.cfg.ID, why)), Via: via})
	}
}

// clientResumes is implemented by stream hints whose client can resume
// its stream: ClientResumed has a value each time it does.
type clientResumes interface {
	ClientResumed() <-chan struct{}
}

// readStream reads one SSE response of request via, delivering what it
// carries and returning its answer. The answer is held back until the
// server ends the stream (or answerLinger passes): a server may write a
// notification of the call just after its answer, and the client must see
// it first.
func (c *streamConn) readStream(body io.ReadCloser, via json.RawMessage, cur *sseCursor) ([]byte, error) {
	var answer []byte
	var linger *time.Timer
	err := readEvents(body, c.cfg.MessageLimit(), func(ev event) bool {
		if ev.ID != "" {
			cur.lastID = ev.ID
		}
		if ev.HasRetry {
			cur.retry, cur.hasRetry = ev.Retry, true
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			return true // a priming event, or a keep-alive
		}
		if via != nil && answer == nil && jsonrpc.IsResponseTo(ev.Data, via) {
			answer = ev.Data
			linger = time.AfterFunc(answerLinger, func() { body.Close() })
			return true
		}
		c.deliver(Incoming{Msg: ev.Data, Via: via})
		return true
	})
	if linger != nil {
		linger.Stop()
	}
	if answer != nil {
		return answer, nil
	}
	return nil, err
}

// resume reopens a response stream with GET and Last-Event-ID; the
// connection ends with the request (rctx) or the session.
func (c *streamConn) resume(rctx context.Context, lastID string) (io.ReadCloser, error) {
	ctx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(rctx, cancel)
	end := func() {
		stop()
		cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.cfg.URL, nil)
	if err != nil {
		end()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	c.headers(req.Header)
	req.Header.Set(mcpwire.HeaderLastEventID, lastID)
	resp, err := httpClient(c.cfg).Do(req)
	if err != nil {
		end()
		return nil, fmt.Errorf("resuming the response stream: %w", err)
	}
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		drain(resp)
		end()
		return nil, fmt.Errorf("the server did not resume the response stream it closed (GET with Last-Event-ID answered HTTP %s, %q)", resp.Status, resp.Header.Get("Content-Type"))
	}
	return &endingBody{ReadCloser: resp.Body, end: end}, nil
}

// endingBody runs end once the body is closed.
type endingBody struct {
	io.ReadCloser
	end func()
}

func (b *endingBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}
