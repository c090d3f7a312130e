package gateway

import (
	"bytes"
	"io"
	"net/http"
	"time"
)

// DefaultMaxBody caps a request body when the workspace sets no max_body:
// MCP requests are small, and an unbounded body is a memory lever.
const DefaultMaxBody = 1 << 20

// boundBodies reads every request body whole, within
// gateway.body_timeout and gateway.max_body, before any handler runs.
//
// Trust boundary: the body of any request, on any path, authenticated or
// not. It matters beyond the handlers that read bodies: net/http reads
// what a handler left unread (up to 256 KiB) before it answers, with no
// deadline, so a body trickled a byte at a time to a handler that answers
// without reading it (a refused token, content type or Origin; a GET)
// would hold the connection for as long as the client likes. Bodies are
// read here under the deadline instead; one that is too large or too
// slow is answered 413 and its connection closed.
func (g *Gateway) boundBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		maxBody := int64(g.ws.Gateway.MaxBodyBytes)
		if maxBody <= 0 {
			maxBody = DefaultMaxBody
		}
		if r.ContentLength > maxBody {
			w.Header().Set("Connection", "close")
			http.Error(w, "request body too large (gateway.max_body)", http.StatusRequestEntityTooLarge)
			return
		}
		// The deadline is lifted again once the body is in, so the
		// request may then run as long as it needs (a call may wait
		// minutes for an approval; a GET stream lasts).
		rc := http.NewResponseController(w)
		timeout := g.ws.Gateway.BodyTimeoutOrDefault()
		_ = rc.SetReadDeadline(time.Now().Add(timeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		if err != nil {
			// The deadline stays and the connection closes after the
			// answer, so nothing more is read from it.
			w.Header().Set("Connection", "close")
			http.Error(w, "request body too large (gateway.max_body), or not sent within gateway.body_timeout ("+timeout.String()+"): "+err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		_ = rc.SetReadDeadline(time.Time{})
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}
