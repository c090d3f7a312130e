// Package mcpserve serves MCP to clients — harnesses and agents — over
// streamable HTTP and stdio, in both protocol eras, for any surface: a
// Session behind each client session answers its requests (the gateway's
// pack surfaces answer locally, proxied surfaces relay to a downstream
// server through mcpproxy). The transports here own framing, session ids,
// streams and their bounds; they decide nothing about tools.
//
// Trust boundary: everything read here comes from an MCP client. Bodies
// are bounded and parsed strictly (jsonrpc) before a Session sees them;
// identity is the caller's business (the gateway authenticates before it
// hands a request to an Endpoint).
package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/strictjson"
)

// Peer is the client side of a session: where messages for the MCP client
// go.
type Peer interface {
	// Send delivers one message to the client. route is the id of the
	// client request the message belongs to (its answer, or progress and
	// requests it caused), nil when none is known. A droppable message (a
	// notification) may be dropped when the client does not keep up;
	// nothing else is.
	Send(msg []byte, route json.RawMessage, droppable bool)
}

// Session answers one client session. HandleClient is called for every
// message in arrival order and must not block on a request's work: it
// serves requests concurrently and answers each through the Peer, routed
// by the request's id. ctx is the request's own context (the HTTP
// request's, for streamable HTTP): when it ends, the request is abandoned.
type Session interface {
	HandleClient(ctx context.Context, m *jsonrpc.Message)
	Close() error
}

// mustBeRequest reports whether m is an id-less message (a notification,
// or "id": null) whose method is not a notification's: tools/call and
// every other request must carry an id. The Session still sees it, so it
// can audit the attempt, but must neither answer nor forward it; the
// transport answers with an error.
func mustBeRequest(m *jsonrpc.Message) bool {
	return m.Kind() == jsonrpc.KindNotification && !IsNotificationMethod(m.Method)
}

// IsNotificationMethod reports whether method names a notification.
func IsNotificationMethod(method string) bool { return strings.HasPrefix(method, "notifications/") }

func notARequest(m *jsonrpc.Message) string {
	return m.Method + " must be sent as a request with an id (not as a notification, not with \"id\": null); it was not run"
}

// Factory starts the Session of a new client session.
type Factory func(ctx context.Context, peer Peer) (Session, error)

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

// MayBeToolsCall reports whether a message the transport refuses before
// any Session sees it (an ambiguous envelope, headers that disagree with
// the body) names tools/call in a member that reads as its method: such an
// attempt is audited like any malformed call (Options.Refused).
func MayBeToolsCall(body []byte) bool {
	if !bytes.Contains(body, []byte("tools/call")) {
		return false
	}
	members, err := strictjson.ScanMembers(body)
	if err != nil {
		// Not even its members can be told apart (trailing data, broken
		// syntax): it names tools/call, so count it as an attempt.
		return true
	}
	for _, m := range members {
		if strictjson.FoldKey(m.Key) == strictjson.FoldKey("method") && string(bytes.TrimSpace(m.Value)) == `"tools/call"` {
			return true
		}
	}
	return false
}
