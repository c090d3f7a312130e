package gateway

import (
	"context"
	"errors"
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
