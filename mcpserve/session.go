// Package mcpserve serves MCP to clients — harnesses and agents — over
// streamable HTTP and stdio, in both protocol eras, for any surface: a
// Session behind each client session answers its requests (the gateway's
// pack surfaces answer locally, proxied surfaces relay to a downstream
// server through mcpproxy, which the gateway plugs in: this package knows
// neither it nor the call pipeline). The transports here own framing,
// session ids, streams and their bounds; they decide nothing about tools.
// What they share with the relay (Peer, Client, versions, headers, stream
// hints) is mcpwire's.
//
// Trust boundary: everything read here comes from an MCP client. Bodies
// are bounded and parsed strictly (jsonrpc) before a Session sees them;
// identity is the caller's business (the gateway authenticates before it
// hands a request to an Endpoint).
package mcpserve

import (
	"bytes"
	"context"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/strictjson"
)

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
	return m.Kind() == jsonrpc.KindNotification && !mcpwire.IsNotificationMethod(m.Method)
}

func notARequest(m *jsonrpc.Message) string {
	return m.Method + " must be sent as a request with an id (not as a notification, not with \"id\": null); it was not run"
}

// Factory starts the Session of a new client session.
type Factory func(ctx context.Context, peer mcpwire.Peer) (Session, error)

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
