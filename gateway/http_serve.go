package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Serve answers HTTP on ln until ctx is cancelled, then shuts down
// gracefully (in-flight calls get a few seconds to finish).
func (g *Gateway) Serve(ctx context.Context, ln net.Listener, opts HTTPOptions) error {
	srv := &http.Server{
		Handler:           g.Handler(opts),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// net/http's own complaints (a TLS handshake, a panic, a query
		// with ';') go through the gateway's logger: one format, redacted,
		// instead of plain text on stderr among the JSON lines.
		ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && serr != nil {
		return serr
	}
	return err
}
