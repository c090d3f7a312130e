package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// event is one server-sent event. Retry is the reconnection time a
// retry field in it asked for (HasRetry).
type event struct {
	ID       string
	Type     string
	Data     []byte
	Retry    time.Duration
	HasRetry bool
}

// readEvents parses a text/event-stream, calling fn for each event until
// the stream ends or fn returns false. Events larger than max end the
// stream with an error.
func readEvents(r io.Reader, max int64, fn func(event) bool) error {
	// 4 KiB, bufio's default: every downstream session holds a GET stream
	// open, so this buffer is per session (32 KiB made it 33 MB of heap
	// for 1,000 idle sessions); longer lines are collected below.
	br := bufio.NewReaderSize(r, 4<<10)
	var ev event
	var data bytes.Buffer
	hasData := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long data line: collect it whole, bounded by max.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				buf = append(buf, line...)
				if int64(len(buf)) > max {
					return fmt.Errorf("event larger than %d bytes", max)
				}
			}
			line = buf
		}
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if hasData || ev.ID != "" || ev.HasRetry {
				ev.Data = append([]byte(nil), data.Bytes()...)
				if !fn(ev) {
					return nil
				}
			}
			ev, hasData = event{}, false
			data.Reset()
		case line[0] == ':':
		default:
			field, value, _ := bytes.Cut(line, []byte(":"))
			value = bytes.TrimPrefix(value, []byte(" "))
			switch string(field) {
			case "event":
				ev.Type = string(value)
			case "id":
				ev.ID = string(value)
			case "retry":
				// Only ASCII digits are a reconnection time.
				if ms, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 && len(bytes.Trim(value, "0123456789")) == 0 {
					ev.Retry, ev.HasRetry = time.Duration(ms)*time.Millisecond, true
				}
			case "data":
				if hasData {
					data.WriteByte('\n')
				}
				data.Write(value)
				hasData = true
				if int64(data.Len()) > max {
					return fmt.Errorf("event larger than %d bytes", max)
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// sseConn is a legacy (2024-11-05) HTTP+SSE connection: one GET stream
// carries every server message, and the first event names the URL that
// client messages are POSTed to.
type sseConn struct {
	cfg      *Config
	endpoint string
	recv     chan Incoming
	done     chan struct{}
	err      error
	cancel   context.CancelFunc
	once     sync.Once
}

func dialSSE(ctx context.Context, cfg *Config) (*sseConn, error) {
	sctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, cfg.URL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := httpClient(cfg).Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("server %q: open SSE stream: %w", cfg.ID, err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("server %q: open SSE stream: HTTP %s", cfg.ID, resp.Status)
	}
	c := &sseConn{cfg: cfg, recv: make(chan Incoming, 64), done: make(chan struct{}), cancel: cancel}
	endpoint := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		defer close(c.recv)
		err := readEvents(resp.Body, cfg.MessageLimit(), func(ev event) bool {
			switch ev.Type {
			case "endpoint":
				select {
				case endpoint <- string(ev.Data):
				default:
				}
			case "", "message":
				c.recv <- Incoming{Msg: ev.Data}
			}
			return true
		})
		if err == nil {
			err = fmt.Errorf("server %q closed its SSE stream", cfg.ID)
		}
		if sctx.Err() != nil {
			err = ErrClosed
		}
		c.err = err
		close(c.done)
	}()
	select {
	case ep := <-endpoint:
		u, err := url.Parse(cfg.URL)
		if err == nil {
			var ref *url.URL
			if ref, err = url.Parse(ep); err == nil {
				c.endpoint = u.ResolveReference(ref).String()
			}
		}
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("server %q: bad endpoint event %q: %w", cfg.ID, ep, err)
		}
	case <-c.done:
		return nil, c.err
	case <-ctx.Done():
		c.Close()
		return nil, ctx.Err()
	}
	return c, nil
}

func (c *sseConn) Send(ctx context.Context, msg []byte, _ json.RawMessage) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.cfg.Headers {
		req.Header.Set(k, v)
	}
	if c.cfg.RequestHeaders != nil {
		c.cfg.RequestHeaders(ctx, msg, req.Header)
	}
	resp, err := httpClient(c.cfg).Do(req)
	if err != nil {
		return fmt.Errorf("server %q: %w", c.cfg.ID, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("server %q answered HTTP %s", c.cfg.ID, resp.Status)
	}
	return nil
}

func (c *sseConn) Recv() <-chan Incoming     { return c.recv }
func (c *sseConn) Done() <-chan struct{}     { return c.done }
func (c *sseConn) Err() error                { return c.err }
func (c *sseConn) SetProtocolVersion(string) {}

func (c *sseConn) Close() error {
	c.once.Do(func() {
		c.cancel()
		go func() {
			for range c.recv {
			}
		}()
		<-c.done
	})
	return nil
}

func httpClient(cfg *Config) *http.Client {
	if cfg.HTTPClient != nil {
		return cfg.HTTPClient
	}
	return http.DefaultClient
}
