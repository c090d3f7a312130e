package mcpwire

import (
	"context"
	"time"
)

// StreamHints carry a downstream server's choices about the stream it
// answers a request on to the transport serving the client, so that
// toolgate answers the client as the server answered toolgate: an SSE
// stream for an SSE stream, and a stream closed mid-call (SEP-1699
// polling) for one closed mid-call. The client's transport (mcpserve)
// puts its hints in the context of each request it hands on
// (WithStreamHints); the downstream transport (mcpproxy/transport) calls
// them. A transport that cannot mirror a choice ignores it.
type StreamHints interface {
	// Streamed says the server answers the request with an SSE stream.
	Streamed()
	// Paused says the server closed that stream before answering and is
	// to be polled again after retry: toolgate resumes it downstream, and
	// the client's stream is closed the same way once what came before
	// is written (only for clients that can resume it).
	Paused(retry time.Duration)
}

type hintsKey struct{}

// WithStreamHints returns ctx carrying h for the downstream transport.
func WithStreamHints(ctx context.Context, h StreamHints) context.Context {
	return context.WithValue(ctx, hintsKey{}, h)
}

// StreamHintsFrom returns the hints ctx carries, nil when none (a stdio
// client, or a request toolgate makes on its own behalf).
func StreamHintsFrom(ctx context.Context) StreamHints {
	h, _ := ctx.Value(hintsKey{}).(StreamHints)
	return h
}
