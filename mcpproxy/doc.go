// Package mcpproxy relays MCP sessions between clients (harnesses, served
// over streamable HTTP or stdio by mcpserve) and downstream MCP servers
// (reached over stdio, streamable HTTP or legacy HTTP+SSE), leaving every
// decision about what may cross to hooks the gateway supplies: a client's
// session (NewSession, NewBridge) is refused without Hooks.CallTool, so no
// tools/call crosses undecided.
//
// # Layers
//
// The package is the session layer: Session (one client session relayed
// to one downstream connection: ids, cancellation, restarts), Bridge (a
// legacy client in front of a 2026-07-28-only server), Forwarder (the
// stateless requests of many clients over one connection), the era probe
// and the proxy's own listings. Connections are its subpackage transport's
// (a Conn per stdio process or HTTP session, framing and bounds). What
// both this package and the client-facing transports speak — the Peer a
// session writes to, the Client a hook sees, protocol versions and eras,
// headers, stream hints, the in-flight request table — is mcpwire's: this
// package imports neither mcpserve nor the call pipeline.
//
// # A raw JSON-RPC relay
//
// The relay works on raw JSON-RPC messages rather than on mcp-go's typed
// client and server: a typed round trip decodes and re-encodes tool
// schemas, annotations, _meta and content lossily (unknown keywords such
// as $defs or additionalProperties, or fields newer than the library, are
// dropped), and a transparent proxy must pass them byte for byte. Only the
// envelope (id, method) is parsed; params, results and errors are copied
// as they came. The proxy rewrites exactly three things: request ids (so
// that its own requests never collide with the client's), the requestId
// of notifications/cancelled (mapped both ways), and tools/list results,
// which the gateway filters to the granted tools and narrows by the
// agent's constraints.
//
// # Session model
//
// Every client session gets its own downstream session: a stdio server is
// one process per client session; an HTTP server gets one HTTP session
// (its own Mcp-Session-Id) per client session. This makes routing exact
// with no shared state between clients: progress tokens, subscriptions,
// the log level, and server→client requests (sampling/createMessage,
// elicitation/create, roots/list) belong to the one client whose session
// caused them, so a progress token needs no rewriting and an elicitation
// cannot reach another agent. Within a session, messages that arrive on a
// request's HTTP response stream, or carry that request's progress token,
// are sent back on the stream of the client request that caused them.
//
// An HTTP session costs nothing downstream while its client is idle: its
// GET stream (for what the server sends of its own accord) opens only once
// the client opens its own (mcpwire.ListenSignal; a stdio client, which
// can always be written to, listens from the start), and stays open,
// resumed with Last-Event-ID, until the session ends; the messages of a
// request are read on the goroutine reading its response, so an idle
// session holds no goroutine, and its POSTs' connections go back to the
// server's shared keep-alive pool. A server's tool changes still reach
// the gateway through a Watcher, one listening session of the proxy's own
// per server.
//
// The trade-off is cost for stdio servers: a process per session costs a
// process start (tens of milliseconds for a Go server, more for Node) at
// initialize and the server's memory once per concurrent session, and a
// server that keeps state in memory does not share it between sessions.
// A shared process would save that, but every stdio server would then
// have to be multiplexed (ids, progress tokens and subscriptions rewritten
// per client), and one client's crash-inducing call would end every other
// client's session. Servers that keep their state on disk (as the memory
// server does) behave the same either way.
//
// Closing a client session (DELETE, idle expiry, end of stdin) closes the
// downstream session: stdin closed, then the process group terminated
// and killed after a grace period and reaped; HTTP sessions get DELETE.
//
// # Failures
//
// A downstream connection that fails (process exit, oversized message,
// HTTP session lost) fails every request in flight on it with an error
// naming the server and the cause, then is re-established with backoff
// (100ms doubling to 5s); the client's initialize, log level and resource
// subscriptions are replayed, and the client gets
// notifications/tools/list_changed once the server is back. Requests made
// meanwhile fail at once with "restarting". A Bridge's
// subscriptions/listen stream that ends is likewise reopened with backoff
// (100ms doubling to 5s) for as long as its session lives, and the client
// then gets each list's list_changed once. Every forwarded request is
// bounded by the server's timeout (then cancelled downstream); one message
// from a server is bounded by its max_output (default 16 MiB); slow
// clients lose notifications rather than making memory grow.
package mcpproxy
