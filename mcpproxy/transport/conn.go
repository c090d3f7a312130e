package transport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/packs/contain"
)

// Defaults applied when a server declares no bound of its own.
const (
	// DefaultTimeout bounds one forwarded request (tools/call included).
	DefaultTimeout = 60 * time.Second
	// DefaultMaxMessage bounds one message read from a downstream server;
	// a larger one ends the connection as a protocol failure.
	DefaultMaxMessage = 16 << 20
)

// Config is one downstream server, with credentials already substituted
// into Env and Headers. The gateway builds it from workspace.MCPServer.
type Config struct {
	ID string
	// Command is the argv of a stdio server; Env is its whole environment
	// (the clean base plus the declared env) and Dir its working directory.
	Command []string
	Env     []string
	Dir     string
	// URL is a streamable HTTP endpoint, or with Transport "sse" a legacy
	// SSE endpoint. Headers are sent on every request.
	URL       string
	Transport string
	Headers   map[string]string
	// ProtocolVersion, when set, replaces the version the client asks for
	// in initialize, for servers that only speak an older one.
	ProtocolVersion string
	// Timeout bounds each forwarded request; TimeoutFor may give a tool its
	// own bound.
	Timeout    time.Duration
	TimeoutFor map[string]time.Duration
	// MaxMessage bounds one message read from the server.
	MaxMessage int64
	// Contain, when set, runs a stdio server contained (package contain):
	// its whole tree stops when the session ends and when the gateway
	// dies, even by SIGKILL, whatever the server does (setsid, double
	// fork, killing its parent). The gateway passes the Manager its packs
	// runner uses. Nil runs the server directly in its own process group.
	Contain *contain.Manager
	// HTTPClient is shared by every HTTP session to this server.
	HTTPClient *http.Client
	// Logger is the server's logger. It already names the server (the
	// gateway's carries server=<ID>), so lines logged with it do not add
	// the ID again.
	Logger *slog.Logger
	// Stderr, when set, keeps the last stderr lines of the server's last
	// process to exit, for the gateway's status of a server that fails.
	Stderr *StderrTail
	// ParamHeaders returns the Mcp-Param-* headers a 2026-07-28 tools/call
	// of tool with params needs (from the tool's x-mcp-header schema
	// annotations); nil when none are known.
	ParamHeaders func(tool string, params []byte) map[string]string
	// RequestHeaders, when set, may add headers to each HTTP request that
	// carries a message to the server (the gateway's trace context), after
	// every other header is set; msg is the message being sent. It runs on
	// the sending goroutine and must not block.
	RequestHeaders func(ctx context.Context, msg []byte, h http.Header)

	// stateless is set on the copy of a config used for a server that
	// speaks 2026-07-28 (see Stateless).
	stateless bool
}

// Stateless returns a copy of c for talking to the server in 2026-07-28
// terms (no sessions, standard headers on every request).
func (c *Config) Stateless() *Config {
	cp := *c
	cp.stateless = true
	return &cp
}

// IsStateless reports whether c is a stateless copy.
func (c *Config) IsStateless() bool { return c.stateless }

// RequestTimeout bounds one forwarded request of tool ("" for any request
// that is not a tools/call): its own bound, else the server's, else
// DefaultTimeout.
func (c *Config) RequestTimeout(tool string) time.Duration {
	if d, ok := c.TimeoutFor[tool]; ok && d > 0 {
		return d
	}
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

// MessageLimit bounds one message read from the server.
func (c *Config) MessageLimit() int64 {
	if c.MaxMessage > 0 {
		return c.MaxMessage
	}
	return DefaultMaxMessage
}

// Log is the server's logger; one that discards when none is set.
func (c *Config) Log() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// Incoming is one message read from a downstream server. Via is the id of
// the proxy's request whose HTTP response stream carried it, when the
// transport can tell (streamable HTTP); it routes server→client requests
// and notifications to the client request that caused them.
type Incoming struct {
	Msg []byte
	Via json.RawMessage
}

// Conn is one connection to a downstream server: a process (stdio) or an
// HTTP session. Messages read arrive on Recv; Done closes when the
// connection ends, after which Err says why.
type Conn interface {
	// Send writes one message. For a request, id is its id (so that a
	// streamable HTTP response stream can be attributed to it).
	Send(ctx context.Context, msg []byte, id json.RawMessage) error
	Recv() <-chan Incoming
	Done() <-chan struct{}
	Err() error
	// Close ends the connection and releases everything it holds (the
	// process group, the HTTP session).
	Close() error
	// SetProtocolVersion records the version initialize settled on, which
	// HTTP transports send as MCP-Protocol-Version.
	SetProtocolVersion(v string)
}

// ErrClosed is the error of a connection closed by the proxy itself.
var ErrClosed = errors.New("connection closed")

// Dial opens a connection to the downstream server described by cfg.
func Dial(ctx context.Context, cfg *Config) (Conn, error) {
	switch {
	case len(cfg.Command) > 0:
		return dialStdio(cfg)
	case cfg.URL != "" && cfg.Transport == "sse":
		return dialSSE(ctx, cfg)
	case cfg.URL != "":
		return dialStreamable(cfg), nil
	}
	return nil, fmt.Errorf("server %q has neither command nor url", cfg.ID)
}

// Listener is a Conn that opens its stream for the messages a server
// sends of its own accord (streamable HTTP's GET stream) only when asked:
// until Listen it reads only what comes back on the responses to the
// proxy's own POSTs. A Conn that is not one (stdio, legacy SSE) always
// reads everything the server sends.
type Listener interface {
	Listen()
}

var _ Listener = (*streamConn)(nil)

// Listen asks c for everything the server sends of its own accord, when
// c is a Listener; otherwise it already gets it.
func Listen(c Conn) {
	if l, ok := c.(Listener); ok {
		l.Listen()
	}
}

// Pusher is a Conn that can hand each message straight to a function on
// the goroutine that read it (see streamConn.Push) instead of Recv, so
// that its reader holds no goroutine while nothing is read. ended runs
// once, on a goroutine of its own, after the connection ended; Push is
// called before the first Send.
type Pusher interface {
	Push(deliver func(Incoming), ended func())
}

var _ Pusher = (*streamConn)(nil)
