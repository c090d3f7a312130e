package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// stdioUpstream writes client-bound messages as lines on out.
type stdioUpstream struct {
	mu  sync.Mutex
	out io.Writer
	err error
}

func (u *stdioUpstream) Send(msg []byte, _ json.RawMessage, _ bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.err != nil {
		return
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(appendLine(buf, msg), '\n')
	_, u.err = u.out.Write(buf)
}

// appendLine appends msg as one line: a message is one JSON text, but
// what a server sent may hold line breaks between tokens, which would end
// the line early; they are compacted away (line breaks inside strings are
// always escaped).
func appendLine(dst, msg []byte) []byte {
	if bytes.ContainsAny(msg, "\r\n") {
		var b bytes.Buffer
		if json.Compact(&b, msg) == nil {
			return append(dst, b.Bytes()...)
		}
	}
	return append(dst, msg...)
}

// ServeStdio serves one client spoken as newline-delimited JSON-RPC on
// in/out (what a harness launches) until in ends or ctx is cancelled, in
// both protocol eras, per message: a request whose _meta declares
// 2026-07-28 is served statelessly by opts.Modern (notifications/cancelled
// ends it); anything else belongs to the one legacy session, opened on the
// first such message (so a modern client starts no session, and no
// downstream session behind it).
func ServeStdio(ctx context.Context, opts Options, in io.Reader, out io.Writer) error {
	up := &stdioUpstream{out: out}
	var sess Session
	defer func() {
		if sess != nil {
			sess.Close()
		}
	}()
	var modern mcpwire.Requests
	var wg sync.WaitGroup
	defer wg.Wait()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br, maxClientMessage)
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-sctx.Done():
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	for {
		select {
		case <-sctx.Done():
			return nil
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case line := <-lines:
			m, err := jsonrpc.ParseMessage(line)
			if err != nil {
				if opts.Refused != nil && MayBeToolsCall(line) {
					opts.Refused(sctx, err)
				}
				up.Send(jsonrpc.ErrorResponse(nil, jsonrpc.CodeParseError, err.Error()), nil, false)
				continue
			}
			if req, v := requestMeta(m); mcpwire.IsStateless(v) || (opts.Legacy == nil && m.Kind() != jsonrpc.KindResponse) {
				serveStdioModern(sctx, opts, &modern, &wg, m, req, v, up)
				continue
			}
			if m.Kind() == jsonrpc.KindNotification && m.Method == "notifications/cancelled" && modern.Cancel(m.Params) {
				continue
			}
			if sess == nil {
				if opts.Legacy == nil {
					continue
				}
				if sess, err = opts.Legacy(sctx, up); err != nil {
					return err
				}
			}
			sess.HandleClient(sctx, m)
			if mustBeRequest(m) {
				up.Send(jsonrpc.ErrorResponse(nil, jsonrpc.CodeInvalidRequest, notARequest(m)), nil, false)
			}
		}
	}
}

// serveStdioModern serves one stateless message read on stdio.
func serveStdioModern(ctx context.Context, opts Options, reqs *mcpwire.Requests, wg *sync.WaitGroup, m *jsonrpc.Message, req Request, version string, up mcpwire.Peer) {
	h := opts.Modern
	id := m.ID
	if !jsonrpc.HasID(id) {
		id = nil
	}
	refuse := func(msg []byte) {
		if m.Method == "tools/call" && opts.Refused != nil {
			opts.Refused(ctx, errors.New(jsonrpc.ParseError(jsonrpc.Field(msg, "error")).Message))
		}
		up.Send(msg, nil, false)
	}
	switch {
	case h == nil || (version != mcpwire.Modern && version != ""):
		if m.Kind() == jsonrpc.KindRequest {
			up.Send(unsupportedVersion(id, version), nil, false)
		}
		return
	case m.Kind() != jsonrpc.KindRequest:
		if m.Method == "notifications/cancelled" {
			reqs.Cancel(m.Params)
			return
		}
		h.Notify(ctx, m, req)
		if mustBeRequest(m) {
			up.Send(jsonrpc.ErrorResponse(nil, jsonrpc.CodeInvalidRequest, notARequest(m)), nil, false)
		}
		return
	case version == "":
		refuse(jsonrpc.ErrorResponse(id, jsonrpc.CodeInvalidParams, "Invalid params: missing _meta field "+mcpwire.MetaProtocolVersion))
		return
	case !isObject(req.Capabilities):
		refuse(jsonrpc.ErrorResponse(id, jsonrpc.CodeInvalidParams, "Invalid params: missing or invalid _meta field "+mcpwire.MetaClientCapabilities))
		return
	case mcpwire.RemovedInModern(m.Method):
		up.Send(jsonrpc.ErrorResponse(id, jsonrpc.CodeMethodNotFound, "Method not found: "+m.Method+" was removed in protocol version "+mcpwire.Modern), nil, false)
		return
	}
	rctx, done := reqs.Start(ctx, ctx, m.ID)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done()
		h.Serve(rctx, m, req, up)
	}()
}

func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max {
			return nil, fmt.Errorf("a client message is longer than %d bytes", max)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return trimLine(line), err
	}
}

// trimLine drops the line end (LF or CRLF) and surrounding white space.
func trimLine(b []byte) []byte { return bytes.TrimSpace(b) }
