package redact

import (
	"encoding/json"
	"log/slog"

	"github.com/toolgate/toolgate/jsonrpc"
)

// Sender delivers a proxied session's messages to the client: the method
// set of mcpwire.Peer, so a Peer wraps any of them.
type Sender interface {
	Send(msg []byte, route json.RawMessage, droppable bool)
}

// Peer wraps the client side of a proxied session as the downstream
// server reaches it: every message the relay passes on — notifications,
// server-to-client requests, responses — has the credentials removed
// first (a server given a credential in its env or headers may echo it
// anywhere). A message that cannot be redacted safely is dropped (a
// notification) or replaced by an error (anything the client waits on),
// and log is told.
func Peer(inner Sender, r *Redactor, log *slog.Logger) Sender {
	return peer{inner: inner, r: r, log: log}
}

type peer struct {
	inner Sender
	r     *Redactor
	log   *slog.Logger
}

// Send implements Sender.
func (p peer) Send(msg []byte, route json.RawMessage, droppable bool) {
	red, ok := p.r.JSON(msg)
	if !ok {
		if droppable {
			p.log.Warn("a message from an MCP server held a credential and was not relayed")
			return
		}
		m, err := jsonrpc.ParseMessage(msg)
		if err != nil || !jsonrpc.HasID(m.ID) {
			return
		}
		red = jsonrpc.ErrorResponse(m.ID, jsonrpc.CodeInternalError, "the server's message held a credential and was withheld")
	}
	p.inner.Send(red, route, droppable)
}
