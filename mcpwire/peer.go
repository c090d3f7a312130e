package mcpwire

import (
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/jsonrpc"
)

// Peer is the client side of a session: where messages for the MCP client
// go. The transports serving clients implement it; the relay and the
// gateway's own sessions write to it.
type Peer interface {
	// Send delivers one message to the client. route is the id of the
	// client request the message belongs to (its answer, or progress and
	// requests it caused), nil when none is known. A droppable message (a
	// notification) may be dropped when the client does not keep up;
	// nothing else is.
	Send(msg []byte, route json.RawMessage, droppable bool)
}

// Client is what a session knows of its client that the gateway needs
// while serving one of its requests: where to send (Peer), how to make
// requests of its own to it (Outbound), and what it said in initialize.
type Client struct {
	Peer     Peer
	Outbound *jsonrpc.Outbound
	// Version is the negotiated protocol version (2025 era) or the one the
	// request declared (2026-07-28).
	Version string
	// Capabilities is the client's capabilities object, raw; nil if none.
	Capabilities json.RawMessage
}

// IsNotificationMethod reports whether method names a notification.
func IsNotificationMethod(method string) bool { return strings.HasPrefix(method, "notifications/") }
