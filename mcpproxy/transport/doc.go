// Package transport is how toolgate reaches a downstream MCP server: one
// Conn per connection, over stdio (a process in its own process group,
// optionally under the packs supervisor, so its whole tree stops with the
// session and with the gateway), streamable HTTP (a session's POSTs, its
// GET stream, SSE polling and resumption; or, for a 2026-07-28 server, a
// POST per request with the standard headers mirrored from the body), or
// the legacy HTTP+SSE transport. A Conn moves whole JSON-RPC messages and
// tells which request's response stream carried each one (Incoming.Via);
// it knows nothing of ids, sessions' state or what may cross — that is
// the relay's (mcpproxy) and the gateway's.
//
// Trust boundary: everything read here comes from a downstream server.
// Each message is bounded (Config.MaxMessage, DefaultMaxMessage), a
// server's stderr is kept only as a short tail, and a server that stops
// reading its stdin cannot hold a writer past the write bound.
package transport
