package mcpproxy

import (
	"context"
	"sync"

	"github.com/toolgate/toolgate/mcpproxy/transport"
)

// Watcher holds, for one streamable HTTP server, a session of the
// proxy's own that listens (its GET stream open), so that the server's
// notifications/tools/list_changed reaches the gateway while no client's
// session listens: a client session opens its downstream stream only
// once its client opens one (Session), so an idle one hears nothing. The
// session comes back after a failure as any session does (restarts, the
// handshake replayed, the change hook run). The zero value is ready;
// Close stops it. Safe for concurrent use.
type Watcher struct {
	mu      sync.Mutex
	s       *Session
	started bool
	closed  bool
	wg      sync.WaitGroup
}

// Start opens the watching session to cfg in the background, once:
// dialled, initialized as info, listening, with changed as its
// ToolsChanged hook. A server other than a session-era streamable HTTP
// one (stdio, legacy SSE, stateless) sends everything on what its
// sessions read anyway and is not watched. When the handshake fails the
// next Start tries again.
func (w *Watcher) Start(cfg *transport.Config, info ClientInfo, changed func(ctx context.Context, s *Session)) {
	if cfg.URL == "" || cfg.Transport == "sse" || cfg.IsStateless() {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.started || w.closed {
		return
	}
	w.started = true
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		s, err := dialSession(context.Background(), cfg, discardPeer{}, Hooks{ToolsChanged: changed})
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), cfg.RequestTimeout(""))
			err = s.Initialize(ctx, info)
			cancel()
			if err != nil {
				_ = s.Close()
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		switch {
		case err != nil:
			cfg.Log().Debug("could not watch an MCP server for tool changes; the next session tries again", "err", err)
			w.started = false
		case w.closed:
			_ = s.Close()
		default:
			w.s = s
		}
	}()
}

// Close ends the watching session and waits for a start under way.
func (w *Watcher) Close() {
	w.mu.Lock()
	w.closed = true
	s := w.s
	w.s = nil
	w.mu.Unlock()
	w.wg.Wait()
	if s != nil {
		_ = s.Close()
	}
}
