package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpproxy/internal/workers"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// Hooks are where the gateway governs what crosses a session.
type Hooks struct {
	// ToolsList rewrites one tools/list result for this client (filtering
	// and narrowing). Nil passes it unchanged.
	ToolsList func(result json.RawMessage) json.RawMessage
	// CallTool handles one tools/call: it decides and, when the call is
	// allowed, calls call.Forward with the params it decided on. It
	// returns the result object for the client, or a JSON-RPC error
	// object. It is required: a client's session without it is refused
	// (NewSession, NewBridge), so no call crosses undecided.
	CallTool func(ctx context.Context, call ToolCall) (result, rpcErr json.RawMessage)
	// ToolsChanged runs when the server's tools may have changed (it said
	// so, or it came back after a restart), before the client is told. s
	// is the session the server spoke on, nil when a bridge relays the
	// change (the hook lists on a session of its own then).
	ToolsChanged func(ctx context.Context, s *Session)
	// Health, when set, hears of the downstream connection's failures and
	// recoveries: the cause when it is lost, each failed restart's error,
	// and nil once it is restored (the gateway's downstream health).
	Health func(err error)
	// EraRefused, when set, hears that the server refused the era this
	// relay speaks to it (mcpwire.EraLegacy: a session's initialize failed;
	// mcpwire.EraModern: a stateless request's protocol version was
	// refused), so what the era probe found is asked again (Eras.Failed).
	EraRefused func(era mcpwire.Era)
}

// restartBackoff bounds the wait between attempts to bring a failed
// downstream connection back: it doubles from min to max with each
// failure, and keeps growing across a restart that answered but failed
// again within restartStable (a server that crashes on its first request
// is not restarted every few hundred milliseconds).
const (
	restartBackoffMin = 100 * time.Millisecond
	restartBackoffMax = 10 * time.Second
	restartStable     = 30 * time.Second
)

// Session relays one MCP client session to one downstream connection; see
// the package doc for the model. It is safe for concurrent use.
type Session struct {
	cfg   *transport.Config
	up    mcpwire.Peer
	hooks Hooks
	log   *slog.Logger
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup

	mu      sync.Mutex
	conn    transport.Conn
	gen     int
	ready   bool
	closed  bool
	lastErr error
	// restarting is set while the one restart loop runs: a connection it
	// tried that dies is its failure, not a new loss. delay is the wait
	// before its next attempt, kept across losses (see restartStable);
	// upSince is when the connection last came back.
	restarting bool
	delay      time.Duration
	upSince    time.Time
	// listening: the client can take what the server sends of its own
	// accord, so every connection of the session asks for it
	// (transport.Listen). A client whose transport says when it listens
	// (mcpwire.ListenFrom: a streamable HTTP client's GET stream) starts
	// without: an idle session then holds no downstream stream.
	listening  bool
	nextID     int64
	pending    map[int64]*pending
	byClientID map[string]int64
	tokens     map[string]json.RawMessage
	// serverReqs maps the ids the proxy gave server→client requests to the
	// server's own ids (and back, in serverIDs).
	nextUpID   int64
	serverReqs map[string]serverReq
	serverIDs  map[string]string
	initParams json.RawMessage
	version    string
	// info is the proxy's identity on its own stateless requests.
	info       ClientInfo
	clientCaps json.RawMessage
	// requests are the client's requests in flight, each with its context;
	// workers serve them.
	requests mcpwire.Requests
	workers  *workers.Pool
	// outbound correlates requests the gateway makes of the client.
	outbound *jsonrpc.Outbound
	// replay are requests that set session state (log level, resource
	// subscriptions), sent again after a restart.
	replay map[string]*jsonrpc.Message
}

type pending struct {
	clientID json.RawMessage
	token    string
	gen      int
	ch       chan reply
}

type reply struct {
	result, rpcErr json.RawMessage
	err            error
}

type serverReq struct {
	id  json.RawMessage
	gen int
}

// ErrNoCallTool refuses a client's session or bridge constructed without
// Hooks.CallTool: every tools/call must be decided, so a relay that would
// forward calls undecided is not built.
var ErrNoCallTool = errors.New("mcpproxy: Hooks.CallTool is nil: a client's session needs the gateway's decision on every tools/call (pass a hook that forwards explicitly where nothing is governed)")

// NewSession connects to the server described by cfg and starts relaying
// its messages to up, deciding every tools/call through hooks.CallTool
// (required: ErrNoCallTool without it). Close ends it.
func NewSession(ctx context.Context, cfg *transport.Config, up mcpwire.Peer, hooks Hooks) (*Session, error) {
	if hooks.CallTool == nil {
		return nil, fmt.Errorf("session with server %q: %w", cfg.ID, ErrNoCallTool)
	}
	return dialSession(ctx, cfg, up, hooks)
}

// dialSession is a session the proxy holds for its own requests (a
// listing, the era probe, the forwarder's connection): no client's calls
// reach it, so it needs no CallTool hook.
func dialSession(ctx context.Context, cfg *transport.Config, up mcpwire.Peer, hooks Hooks) (*Session, error) {
	conn, err := transport.Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return newSession(cfg, up, hooks, conn, mcpwire.ListenFrom(ctx)), nil
}

// newSession is a session on conn, already connected. With sig, the
// session listens downstream once the client does (sig says when);
// without, from the start.
func newSession(cfg *transport.Config, up mcpwire.Peer, hooks Hooks, conn transport.Conn, sig *mcpwire.ListenSignal) *Session {
	sctx, stop := context.WithCancel(context.Background())
	s := &Session{cfg: cfg, up: up, hooks: hooks, log: cfg.Log(), ctx: sctx, stop: stop,
		pending: map[int64]*pending{}, byClientID: map[string]int64{}, tokens: map[string]json.RawMessage{},
		serverReqs: map[string]serverReq{}, serverIDs: map[string]string{}, replay: map[string]*jsonrpc.Message{},
		outbound: jsonrpc.NewOutbound("tg-"), listening: sig == nil}
	s.workers = workers.New(&s.wg, sctx.Done())
	s.install(conn, true)
	if sig != nil {
		sig.OnListen(s.listen)
	}
	return s
}

// listen is the client's first stream for what the server sends of its
// own accord: the connection, and every one after it, asks for it too.
func (s *Session) listen() {
	s.mu.Lock()
	s.listening = true
	conn, closed := s.conn, s.closed
	s.mu.Unlock()
	if conn != nil && !closed {
		transport.Listen(conn)
	}
}

// install makes conn the session's connection and starts reading it. It
// reports false, changing nothing, once the session is closed.
func (s *Session) install(conn transport.Conn, ready bool) bool {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.conn = conn
	s.gen++
	s.ready = ready
	gen := s.gen
	listening := s.listening
	s.mu.Unlock()
	s.wg.Add(1)
	if p, ok := conn.(transport.Pusher); ok {
		// Read on the connection's own goroutines: an idle session holds
		// none. The session's count is held until the connection ends.
		p.Push(s.fromServer, func() {
			defer s.wg.Done()
			s.lost(gen, conn.Err())
		})
	} else {
		go s.read(conn, gen)
	}
	if listening {
		transport.Listen(conn)
	}
	return true
}

func (s *Session) read(conn transport.Conn, gen int) {
	defer s.wg.Done()
	recv := conn.Recv()
	for {
		select {
		case in, ok := <-recv:
			if !ok {
				<-conn.Done()
				s.lost(gen, conn.Err())
				return
			}
			s.fromServer(in)
		case <-conn.Done():
			for drained := false; !drained; {
				select {
				case in, ok := <-recv:
					if !ok {
						drained = true
					} else {
						s.fromServer(in)
					}
				default:
					drained = true
				}
			}
			s.lost(gen, conn.Err())
			return
		}
	}
}

// lost handles the end of connection generation gen: every call still
// waiting on it fails with the reason, and unless the session is closing,
// the connection is brought back with backoff, by one restart loop.
func (s *Session) lost(gen int, cause error) {
	s.mu.Lock()
	if gen != s.gen || s.closed {
		s.mu.Unlock()
		return
	}
	if cause == nil {
		cause = errors.New("connection ended")
	}
	s.lastErr = cause
	s.ready = false
	dead := s.conn
	var failed []*pending
	for id, p := range s.pending {
		if p.gen == gen {
			failed = append(failed, p)
			s.forget(id, p)
		}
	}
	clear(s.serverReqs)
	clear(s.serverIDs)
	retrying := s.restarting
	s.restarting = true
	delay := restartBackoffMin
	if !s.upSince.IsZero() && time.Since(s.upSince) < restartStable && s.delay > 0 {
		delay = s.delay // it came back and failed again soon: keep backing off
	}
	s.mu.Unlock()
	err := fmt.Errorf("server %q failed while the request was in flight: %w", s.cfg.ID, cause)
	for _, p := range failed {
		p.ch <- reply{err: err}
	}
	_ = dead.Close()
	if retrying {
		// A connection the restart loop was trying: its attempt fails
		// with this cause, and the loop backs off.
		return
	}
	s.log.Warn("mcp server connection lost; restarting", "err", cause, "retry_in", delay.String())
	if s.hooks.Health != nil {
		s.hooks.Health(cause)
	}
	s.wg.Add(1)
	go s.restart(delay)
}

// restart brings the connection back, waiting delay before the first
// attempt and doubling it (up to restartBackoffMax) after each failure.
// The connection counts as restored only once the server answered on it.
func (s *Session) restart(delay time.Duration) {
	defer s.wg.Done()
	for attempt := 1; ; attempt++ {
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(delay*2, restartBackoffMax)
		s.mu.Lock()
		s.delay = delay // the wait if it fails again soon after coming back
		s.mu.Unlock()
		if err := s.reconnect(); err != nil {
			s.mu.Lock()
			s.lastErr = err
			s.mu.Unlock()
			if s.ctx.Err() != nil {
				return
			}
			s.log.Warn("mcp server restart failed", "attempt", attempt, "err", err, "retry_in", delay.String())
			if s.hooks.Health != nil {
				s.hooks.Health(err)
			}
			continue
		}
		s.log.Info("mcp server connection restored", "attempt", attempt)
		if s.hooks.Health != nil {
			s.hooks.Health(nil)
		}
		if s.hooks.ToolsChanged != nil {
			s.hooks.ToolsChanged(s.ctx, s)
		}
		s.up.Send([]byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`), nil, true)
		return
	}
}

// reconnect dials again and replays the client's handshake and the
// session state it set.
func (s *Session) reconnect() error {
	conn, err := transport.Dial(s.ctx, s.cfg)
	if err != nil {
		return err
	}
	s.mu.Lock()
	params := s.initParams
	version := s.version
	replay := make([]*jsonrpc.Message, 0, len(s.replay))
	for _, m := range s.replay {
		replay = append(replay, m)
	}
	s.mu.Unlock()
	conn.SetProtocolVersion(version)
	if !s.install(conn, false) {
		_ = conn.Close()
		return transport.ErrClosed
	}
	if params != nil {
		r := s.roundTrip(s.ctx, &jsonrpc.Message{Method: "initialize", Params: params}, nil, s.cfg.RequestTimeout(""), true)
		if r.err == nil && r.rpcErr != nil {
			r.err = fmt.Errorf("initialize: %s", r.rpcErr)
		}
		if r.err != nil {
			s.mu.Lock()
			s.ready = false
			s.mu.Unlock()
			_ = conn.Close()
			return r.err
		}
		if err := conn.Send(s.ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil); err != nil {
			_ = conn.Close()
			return err
		}
	}
	if params == nil {
		// No handshake to replay: a ping shows the server answers (an
		// error answer is an answer) before the connection counts as
		// restored.
		r := s.roundTrip(s.ctx, &jsonrpc.Message{Method: "ping"}, nil, s.cfg.RequestTimeout(""), true)
		if r.err != nil {
			_ = conn.Close()
			return r.err
		}
	}
	for _, m := range replay {
		_ = s.roundTrip(s.ctx, m, nil, s.cfg.RequestTimeout(""), true)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-conn.Done():
		// It died while the state was replayed: this attempt failed.
		return fmt.Errorf("server %q: the connection ended as it was restored: %w", s.cfg.ID, conn.Err())
	default:
	}
	// Restored, in one step with leaving the loop: a loss from now on
	// starts a restart of its own.
	s.ready, s.restarting, s.upSince = true, false, time.Now()
	return nil
}

// Close ends the session and its downstream connection, failing whatever
// is in flight, and returns once every goroutine of the session is gone
// (for stdio: once the server process is reaped).
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conn := s.conn
	var failed []*pending
	for id, p := range s.pending {
		failed = append(failed, p)
		s.forget(id, p)
	}
	s.mu.Unlock()
	for _, p := range failed {
		p.ch <- reply{err: fmt.Errorf("the session with server %q was closed", s.cfg.ID)}
	}
	s.stop()
	if conn != nil {
		_ = conn.Close()
	}
	s.wg.Wait()
	return nil
}

// forget drops a pending request's indexes; s.mu must be held.
func (s *Session) forget(id int64, p *pending) {
	delete(s.pending, id)
	if p.clientID != nil {
		delete(s.byClientID, jsonrpc.IDKey(p.clientID))
	}
	if p.token != "" {
		delete(s.tokens, p.token)
	}
}

// Request sends the proxy's own request to the server (not on behalf of
// the client) and returns the result, e.g. to list tools for the policy.
func (s *Session) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	r := s.roundTrip(ctx, &jsonrpc.Message{Method: method, Params: params}, nil, s.cfg.RequestTimeout(""), false)
	if r.err != nil {
		return nil, r.err
	}
	if r.rpcErr != nil {
		var e jsonrpc.RPCError
		_ = json.Unmarshal(r.rpcErr, &e)
		return nil, fmt.Errorf("server %q: %s: %s", s.cfg.ID, method, e.Message)
	}
	return r.result, nil
}

// roundTrip sends m to the server under a fresh id and waits for the
// answer, bounded by timeout and ctx. clientID is the client's id when
// the request is the client's. internal requests (the restart handshake)
// may go out before the connection is ready.
func (s *Session) roundTrip(ctx context.Context, m *jsonrpc.Message, clientID json.RawMessage, timeout time.Duration, internal bool) reply {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return reply{err: fmt.Errorf("the session with server %q is closed", s.cfg.ID)}
	case !s.ready && !internal:
		cause := s.lastErr
		s.mu.Unlock()
		return reply{err: fmt.Errorf("server %q is restarting after a failure; retry shortly: %w", s.cfg.ID, cause)}
	}
	s.nextID++
	id := s.nextID
	p := &pending{clientID: clientID, gen: s.gen, ch: make(chan reply, 1)}
	if tok := progressToken(m.Params); tok != nil {
		p.token = jsonrpc.IDKey(tok)
		s.tokens[p.token] = clientID
	}
	s.pending[id] = p
	if clientID != nil {
		s.byClientID[jsonrpc.IDKey(clientID)] = id
	}
	conn := s.conn
	s.mu.Unlock()

	wireID := json.RawMessage(jsonrpc.IntID(id))
	out := (&jsonrpc.Message{ID: wireID, Method: m.Method, Params: m.Params}).Encode()
	// The timeout bounds the whole round trip, the send included: a
	// server that stopped reading (a full stdin pipe, an HTTP server that
	// never takes the body) costs the call its timeout, not the write's
	// bound and then the timeout again. The request's context ends when the
	// wait does, whatever ends it: a stateless server's POST is the
	// request's lifetime (ending it cancels the request), and a session's
	// polling of a closed stream stops.
	parent := ctx
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	closing := false
	if c, ok := conn.(interface{ CancelsByClosing() bool }); ok && c.CancelsByClosing() {
		closing = true
	}
	timedOut := func() reply {
		return reply{err: fmt.Errorf("server %q did not answer %s within %s (its timeout); the request was cancelled", s.cfg.ID, m.Method, timeout)}
	}
	if err := conn.Send(ctx, out, wireID); err != nil {
		s.drop(id)
		// A Close racing the write fails the write ("file already
		// closed"); the client is told what happened: the session closed.
		select {
		case r := <-p.ch:
			return r
		default:
		}
		// The deadline ended the write: the call's timeout, unless the
		// transport said more (a stdio server that stopped reading).
		if parent.Err() == nil && ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			return timedOut()
		}
		return reply{err: fmt.Errorf("server %q: %w", s.cfg.ID, err)}
	}
	select {
	case r := <-p.ch:
		return r
	case <-ctx.Done():
		s.drop(id)
		reason := "cancelled"
		if parent.Err() == nil {
			reason = "timed out"
		}
		if !closing {
			s.cancelDownstream(conn, wireID, reason)
		}
		if parent.Err() == nil {
			return timedOut()
		}
		return reply{err: fmt.Errorf("%s to server %q: %w", m.Method, s.cfg.ID, parent.Err())}
	}
}

func (s *Session) drop(id int64) {
	s.mu.Lock()
	if p, ok := s.pending[id]; ok {
		s.forget(id, p)
	}
	s.mu.Unlock()
}

// cancelDownstream tells the server a request ended, in the background:
// the caller has its answer at once, whatever the server does with the
// notification (an HTTP server that never answers its POST, a stdio one
// that stopped reading). The send is bounded (cancelSendMax over HTTP,
// the write deadline on stdio), so the goroutine does not outlive it.
func (s *Session) cancelDownstream(conn transport.Conn, id json.RawMessage, reason string) {
	params, _ := json.Marshal(map[string]any{"requestId": id, "reason": reason})
	msg := (&jsonrpc.Message{Method: "notifications/cancelled", Params: params}).Encode()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), cancelSendMax)
		defer cancel()
		_ = conn.Send(ctx, msg, nil)
	}()
}

// cancelSendMax bounds the send of one notifications/cancelled.
const cancelSendMax = 2 * time.Second

// progressToken returns params._meta.progressToken, or nil.
func progressToken(params json.RawMessage) json.RawMessage {
	return jsonrpc.Field(jsonrpc.Field(params, "_meta"), "progressToken")
}
