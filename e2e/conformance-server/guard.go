package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// guard answers, before mcp-go sees them, the few requests whose answer
// mcp-go v1.2.1 gives a handler no way to produce:
//   - a 2026-07-28 call of capabilityTool without the sampling capability
//     gets MissingRequiredClientCapabilityError (-32021, HTTP 400) with
//     data.requiredCapabilities (a handler's error is always -32603);
//   - a server restricted to one era answers the other era's requests the
//     way such a server does (mcp-go v1.2.1 is always dual-era; its
//     version option changes only what server/discover advertises). The
//     2025-only server knows nothing of 2026-07-28, like an SDK released
//     before it: a request carrying a 2026-07-28 _meta gets a legacy,
//     non-modern error — over HTTP 400 and -32000 "no valid session ID"
//     (it has no Mcp-Session-Id), over stdio -32601 for server/discover
//     and -32600 "not initialized" for the rest — which is what tells a
//     dual-era client to fall back to initialize (2026-07-28 "Versioning",
//     backward compatibility). The 2026-only server answers initialize
//     with UnsupportedProtocolVersionError (-32022) naming 2026-07-28, as
//     the specification asks, and any other request without a 2026-07-28
//     _meta with the 2026 answer to a missing _meta (-32602, HTTP 400).
//
// Everything else passes through untouched.
//
// It also serves the tasks extension (tasks.go) and SSE polling
// (polling.go), which mcp-go v1.2.1 does not do.
type guard struct {
	era   string      // eraBoth, era2025 or era2026
	polls *polling    // SSE polling of test_reconnection; nil: none
	tasks *taskEngine // the tasks extension; nil: none
	// likeRef writes answers as the suite's reference server does
	// (reference.go).
	likeRef bool
}

// The eras a server can be restricted to (flag -era).
const (
	eraBoth = "both"
	era2025 = "2025"
	era2026 = "2026"
)

// legacyVersions are the versions the 2025-only server speaks (every
// session-era version its SDK knows: the server stands for a third party,
// so it takes them from mcp-go, not from toolgate); modernVersions the
// 2026-only server's.
func legacyVersions() []string { return mcp.LegacyProtocolVersions() }
func modernVersions() []string { return []string{mcp.ProtocolVersion20260728} }

// overStdio is the header set of a request that came over stdio.
var overStdio http.Header

type guardedRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name   string                     `json:"name"`
		TaskID string                     `json:"taskId"`
		Meta   map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

// answer returns the reply and HTTP status for a message guard handles
// itself, or ok=false to let mcp-go handle it. h are the request's HTTP
// headers, nil over stdio.
func (g guard) answer(msg []byte, h http.Header) (reply []byte, status int, ok bool) {
	var req guardedRequest
	if json.Unmarshal(msg, &req) != nil || len(req.ID) == 0 || req.Method == "" {
		return nil, 0, false
	}
	version := metaVersion(req)
	if !mcp.IsModernProtocol(version) {
		if g.era != era2026 {
			return nil, 0, false
		}
		if req.Method != string(mcp.MethodInitialize) {
			return rpcError(req.ID, mcp.INVALID_PARAMS, "missing or invalid _meta field "+mcp.MetaKeyProtocolVersion+": this server speaks only "+mcp.ProtocolVersion20260728, nil),
				http.StatusBadRequest, true
		}
		var init struct {
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		_ = json.Unmarshal(msg, &init)
		return rpcError(req.ID, mcp.UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version "+orNone(init.Params.ProtocolVersion)+": this server speaks only "+mcp.ProtocolVersion20260728,
			map[string]any{"supported": modernVersions(), "requested": init.Params.ProtocolVersion}), http.StatusBadRequest, true
	}
	if g.era == era2025 {
		switch {
		case h != nil:
			return rpcError(nil, -32000, "Bad Request: No valid session ID provided", nil), http.StatusBadRequest, true
		case req.Method == string(mcp.MethodServerDiscover):
			return rpcError(req.ID, mcp.METHOD_NOT_FOUND, "Method not found", nil), http.StatusOK, true
		default:
			return rpcError(req.ID, mcp.INVALID_REQUEST, "Invalid Request: server not initialized", nil), http.StatusOK, true
		}
	}
	if g.tasks != nil {
		if reply, status, ok := g.answerTasks(msg, h, req, version); ok {
			return reply, status, ok
		}
	}
	if req.Method == string(mcp.MethodToolsCall) && req.Params.Name == capabilityTool {
		var caps mcp.ClientCapabilities
		_ = json.Unmarshal(req.Params.Meta[mcp.MetaKeyClientCapabilities], &caps)
		if caps.Sampling == nil {
			return rpcError(req.ID, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, capabilityTool+" needs the client's sampling capability",
				map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}}), http.StatusBadRequest, true
		}
	}
	return nil, 0, false
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// rpcError is a JSON-RPC error response; a nil id is sent as null.
func rpcError(id json.RawMessage, code int, message string, data any) []byte {
	e := map[string]any{"code": code, "message": message}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return b
}

// maxGuardedBody bounds what the HTTP guard reads to look at a request.
const maxGuardedBody = 4 << 20

// wrap puts the guard in front of an HTTP handler: POST bodies are read,
// looked at, and handed on unchanged.
func (g guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && g.polls != nil && g.polls.serveGet(w, r) {
			return
		}
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxGuardedBody+1))
		if err != nil || len(body) > maxGuardedBody {
			http.Error(w, "request body unreadable or too large", http.StatusRequestEntityTooLarge)
			return
		}
		if reply, status, ok := g.answer(body, r.Header); ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write(reply)
			return
		}
		if g.polls != nil && g.polls.takePost(r, body) {
			g.polls.servePost(w, body)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rw, done := g.likeReference(w, body)
		next.ServeHTTP(rw, r)
		done()
	})
}

// lockedWriter makes each Write atomic, so lines written by the guard and
// by mcp-go's stdio server never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// filter copies newline-delimited messages from in to the returned reader,
// answering on out the ones the guard handles. The reader ends when in does.
func (g guard) filter(in io.Reader, out io.Writer) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		br := bufio.NewReader(in)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if reply, _, ok := g.answer(line, overStdio); ok {
					if _, werr := out.Write(append(reply, '\n')); werr != nil {
						pw.CloseWithError(werr)
						return
					}
				} else if _, werr := pw.Write(line); werr != nil {
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return pr
}
