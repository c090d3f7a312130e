// Package mcpwire is the MCP vocabulary both sides of toolgate speak: the
// transports serving clients (mcpserve) and the relay to downstream
// servers (mcpproxy). It holds what the two must agree on and nothing
// either one does: the client side of a session (Peer, Client), the
// protocol versions and eras (one list, and its negotiation), the _meta
// keys and HTTP headers of the protocol, the stream hints one transport
// passes to the other, and the table of a session's in-flight requests.
//
// It depends on neither side, nor on the call pipeline: the dependency
// test beside this file keeps it so.
package mcpwire
