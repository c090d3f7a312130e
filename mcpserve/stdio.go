package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolgate/toolgate/jsonrpc"
	"io"
	"sync"
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
	buf = append(append(buf, msg...), '\n')
	_, u.err = u.out.Write(buf)
}

// ServeStdio relays one client session spoken as newline-delimited
// JSON-RPC on in/out (what a harness launches) until in ends or ctx is
// cancelled; then the downstream session is closed.
func ServeStdio(ctx context.Context, newSession Factory, in io.Reader, out io.Writer) error {
	up := &stdioUpstream{out: out}
	sess, err := newSession(ctx, up)
	if err != nil {
		return err
	}
	defer sess.Close()
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br, maxClientMessage)
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
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
		case <-ctx.Done():
			return nil
		case err := <-readErr:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case line := <-lines:
			m, err := jsonrpc.ParseMessage(line)
			if err != nil {
				up.Send(jsonrpc.ErrorResponse(nil, jsonrpc.CodeParseError, err.Error()), nil, false)
				continue
			}
			sess.HandleClient(ctx, m)
			if mustBeRequest(m) {
				up.Send(jsonrpc.ErrorResponse(nil, jsonrpc.CodeInvalidRequest, notARequest(m)), nil, false)
			}
		}
	}
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
