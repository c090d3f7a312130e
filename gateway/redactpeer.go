package gateway

import (
	"encoding/json"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// redactingPeer is the client side of a proxied session as the downstream
// server reaches it: every message the relay passes on — notifications,
// server-to-client requests, responses — has the workspace's credentials
// removed first (a server given a credential in its env or headers may
// echo it anywhere). A message that cannot be redacted safely is dropped
// (a notification) or replaced by an error (anything the client waits on).
type redactingPeer struct {
	inner mcpwire.Peer
	g     *Gateway
}

// Send implements mcpwire.Peer.
func (r redactingPeer) Send(msg []byte, route json.RawMessage, droppable bool) {
	red, ok := r.g.pipe.RedactMessage(msg)
	if !ok {
		if droppable {
			r.g.log.Warn("a message from an MCP server held a credential and was not relayed")
			return
		}
		m, err := jsonrpc.ParseMessage(msg)
		if err != nil || !jsonrpc.HasID(m.ID) {
			return
		}
		red = jsonrpc.ErrorResponse(m.ID, jsonrpc.CodeInternalError, "the server's message held a credential and was withheld")
	}
	r.inner.Send(red, route, droppable)
}

// redacting wraps peer for a proxied server's messages.
func (g *Gateway) redacting(peer mcpwire.Peer) mcpwire.Peer {
	return redactingPeer{inner: peer, g: g}
}
