package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/toolgate/toolgate/mcpserve"
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

// ServeStdio speaks MCP over in/out for one agent and one surface: what a
// harness launches as `toolgate serve --agent A --stdio --surface S`.
func (g *Gateway) ServeStdio(ctx context.Context, agent, surfaceID string, in io.Reader, out io.Writer) error {
	if !g.agentExists(agent) {
		return fmt.Errorf("agent %q is not declared in %s", agent, g.ws.Path)
	}
	opts, ok := g.serveOptions(ctx, agent, surfaceID)
	if !ok {
		return fmt.Errorf("agent %q holds no tool on surface %q; `toolgate check -w %s` lists what it may call", agent, surfaceID, g.ws.Path)
	}
	return mcpserve.ServeStdio(ctx, opts, in, out)
}
