package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
)

// A response under Content-Type application/json is read as a sequence
// of JSON values as they arrive — one message, a batch, or
// newline-delimited JSON with the body kept open (the conformance suite's
// reference server answers subscriptions/listen so: an acknowledgement,
// then a line per change, until either side closes). Each message is
// delivered as soon as it is whole, so a stream relays frame by frame
// rather than when the body ends.

// readJSONStream delivers the JSON values of a response body of request
// via, its answer last (held back, as on an SSE stream, until the body
// ends or answerLinger passes). A body that carried messages and ended
// without the answer — a stream the server closed — fails the request,
// as does one that is not JSON or carries a message over the bound; the
// body is closed when rctx ends (nobody waits for it any more).
func (c *streamConn) readJSONStream(rctx context.Context, body io.ReadCloser, via json.RawMessage) {
	var closed atomic.Bool // by this side: the read's error is not the server's
	end := func() {
		closed.Store(true)
		body.Close()
	}
	stop := context.AfterFunc(rctx, end)
	defer stop()
	var (
		answer []byte
		linger *time.Timer
		frames int
	)
	err := readJSONValues(body, c.cfg.MessageLimit(), func(msg []byte) {
		frames++
		if via != nil && answer == nil && jsonrpc.IsResponseTo(msg, via) {
			answer = msg
			linger = time.AfterFunc(answerLinger, end)
			return
		}
		c.deliver(Incoming{Msg: msg, Via: via})
	})
	if linger != nil {
		linger.Stop()
	}
	if closed.Load() {
		err = nil
	}
	switch {
	case answer != nil:
		c.deliver(Incoming{Msg: answer, Via: via})
	case via == nil || c.ctx.Err() != nil || rctx.Err() != nil:
	case err != nil:
		c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q: %v", c.cfg.ID, err)), Via: via})
	case frames > 0 || c.stateless:
		// A session's server may still answer on its GET stream after an
		// empty body; nothing else will answer a stateless request.
		c.deliver(Incoming{Msg: jsonrpc.ErrorResponse(via, jsonrpc.CodeUnavailable, fmt.Sprintf("server %q closed the response without answering", c.cfg.ID)), Via: via})
	}
}

// readJSONValues calls fn with each JSON-RPC message of r, a batch's
// members one by one, until r ends. A message larger than max, or bytes
// that are not JSON, end it with an error.
func readJSONValues(r io.Reader, max int64, fn func(msg []byte)) error {
	br := &boundedReader{r: r}
	dec := json.NewDecoder(br)
	for {
		// What the decoder may read ahead of the value it is on is bounded
		// by its buffer, which a value within max keeps below 2*max.
		br.limit = dec.InputOffset() + 2*max + 4096
		var v json.RawMessage
		err := dec.Decode(&v)
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, errTooLarge):
			return fmt.Errorf("answer larger than %d bytes", max)
		case err != nil:
			return fmt.Errorf("the answer is not JSON: %w", err)
		case int64(len(v)) > max:
			return fmt.Errorf("answer larger than %d bytes", max)
		}
		if v = bytes.TrimSpace(v); len(v) > 0 && v[0] == '[' {
			var batch []json.RawMessage
			if err := json.Unmarshal(v, &batch); err != nil {
				return fmt.Errorf("the answer is not a JSON-RPC batch: %w", err)
			}
			for _, m := range batch {
				fn(m)
			}
			continue
		}
		fn(v)
	}
}

// errTooLarge ends a boundedReader past its limit.
var errTooLarge = errors.New("read past the message bound")

// boundedReader fails once more than limit bytes were read in all.
type boundedReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		return 0, errTooLarge
	}
	if rest := b.limit - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
