package mcpserve

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// Limits of the client-facing streamable HTTP endpoint.
const (
	// streamBuffer is how many messages wait for one slow client stream;
	// beyond it notifications are dropped, other messages wait.
	streamBuffer = 256
	// backlogMax is how many messages with no open stream are kept for the
	// client's next GET stream.
	backlogMax = 256
	// maxClientMessage bounds one message from the client when the caller
	// set no tighter limit.
	maxClientMessage = 4 << 20
)

// Options configure an Endpoint.
type Options struct {
	// Legacy starts the Session of a session-era client (initialize).
	Legacy Factory
	// Modern serves stateless 2026-07-28 requests; nil refuses them as an
	// unsupported protocol version.
	Modern Handler
	// IdleTTL closes sessions nobody has used for this long (0: never).
	IdleTTL time.Duration
	// MaxSessions bounds the open sessions of the endpoint (0: no bound).
	MaxSessions int
	// ResumeGrace is how long a request whose client went away from its
	// resumable SSE stream waits to be resumed before it is cancelled
	// (0: DefaultResumeGrace).
	ResumeGrace time.Duration
	// Refused is told of a tools/call the transport refuses before any
	// Session or Handler sees it (an ambiguous envelope; a 2026-07-28
	// request whose headers or _meta are wrong), so it is audited like
	// any malformed call. Nil: not told.
	Refused func(ctx context.Context, why error)
	Logger  *slog.Logger
}

// Endpoint serves MCP streamable HTTP to the clients of one agent on one
// surface, in both protocol eras, chosen per request: a request whose
// _meta declares 2026-07-28 is served statelessly by Options.Modern; any
// other belongs to a session (Mcp-Session-Id) opened by initialize.
type Endpoint struct {
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	sessions map[string]*httpSession
	starting int // sessions being started, counted against MaxSessions
	closed   bool
	janitor  chan struct{}
	wg       sync.WaitGroup
}

// NewEndpoint returns an endpoint serving with opts.
func NewEndpoint(opts Options) *Endpoint {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ResumeGrace <= 0 {
		opts.ResumeGrace = DefaultResumeGrace
	}
	return &Endpoint{opts: opts, log: opts.Logger, sessions: map[string]*httpSession{}}
}

// Sessions reports how many client sessions are open.
func (e *Endpoint) Sessions() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.sessions)
}

// Close ends every session and stops the idle janitor.
func (e *Endpoint) Close() {
	e.mu.Lock()
	e.closed = true
	all := make([]*httpSession, 0, len(e.sessions))
	for _, hs := range e.sessions {
		all = append(all, hs)
	}
	if e.janitor != nil {
		close(e.janitor)
		e.janitor = nil
	}
	e.mu.Unlock()
	// In parallel: each may wait for a server that will not exit, and
	// one after another they would hold shutdown that long times N.
	var ending sync.WaitGroup
	for _, hs := range all {
		ending.Go(func() { e.end(hs) })
	}
	ending.Wait()
	e.wg.Wait()
}

func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	modern := mcpwire.IsStateless(r.Header.Get(mcpwire.HeaderProtocolVersion))
	switch r.Method {
	case http.MethodPost:
		e.post(w, r)
	case http.MethodGet, http.MethodDelete:
		if modern || e.opts.Legacy == nil {
			// 2026-07-28 has no GET stream and no sessions to delete.
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, r.Method+" is not part of protocol version "+mcpwire.Modern+": change notifications come on a subscriptions/listen stream", http.StatusMethodNotAllowed)
			return
		}
		if r.Method == http.MethodGet {
			e.getStream(w, r)
			return
		}
		hs := e.lookup(w, r)
		if hs == nil {
			return
		}
		// The client has its answer first: ending the session may take
		// seconds (a stdio server that will not exit gets its grace
		// period, SIGTERM, then SIGKILL), and that is not its to wait for.
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		e.end(hs)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// refused tells Options.Refused of a refused message that may be a
// tools/call.
func (e *Endpoint) refused(ctx context.Context, body []byte, why error) {
	if e.opts.Refused != nil && MayBeToolsCall(body) {
		e.opts.Refused(ctx, why)
	}
}

// post reads and parses one message, then serves it in its era.
func (e *Endpoint) post(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxClientMessage+1))
	if err != nil {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, "request body too large or unreadable: "+err.Error())
		return
	}
	if len(body) > maxClientMessage {
		writeRPCError(w, http.StatusRequestEntityTooLarge, nil, jsonrpc.CodeInvalidRequest, "request body too large")
		return
	}
	m, err := jsonrpc.ParseMessage(body)
	if err != nil {
		e.refused(r.Context(), body, err)
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeParseError, err.Error())
		return
	}
	if m.Kind() == jsonrpc.KindResponse && e.opts.Legacy == nil {
		writeRPCError(w, http.StatusBadRequest, nil, jsonrpc.CodeInvalidRequest, "clients send no responses in protocol version "+mcpwire.Modern)
		return
	}
	req, metaVersion := requestMeta(m)
	headerVersion := r.Header.Get(mcpwire.HeaderProtocolVersion)
	if mcpwire.IsStateless(metaVersion) || mcpwire.IsStateless(headerVersion) || e.opts.Legacy == nil {
		e.modernPost(w, r, m, req, metaVersion, headerVersion)
		return
	}
	e.legacyPost(w, r, m)
}

func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.ErrorResponse(id, code, msg))
}

func accepts(r *http.Request, mediaType string) bool {
	for _, v := range r.Header.Values("Accept") {
		if strings.Contains(v, mediaType) || strings.Contains(v, "*/*") {
			return true
		}
	}
	return false
}

// writeEvent writes one SSE message event without an id.
func writeEvent(w io.Writer, msg []byte) bool { return writeSSE(w, "", msg) }
