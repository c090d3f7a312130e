package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/callpipe"
	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/strictjson"
)

// Asker reaches the client of one request while the pipeline holds it
// for approval: notifications/progress on the request's own stream when
// the client sent a progress token, and elicitation/create when the
// client declared elicitation and speaks a protocol that lets a server
// send requests mid-call (up to 2025-11-25; 2026-07-28 asks through
// input-required results instead). It implements callpipe.Asker.
type Asker struct {
	client Client
	route  json.RawMessage
	token  []byte
}

// NewAsker returns the asker of the request route of client; token is the
// request's _meta.progressToken as parsed (nil: no progress).
func NewAsker(client Client, route json.RawMessage, token any) *Asker {
	a := &Asker{client: client, route: route}
	if token != nil {
		a.token, _ = strictjson.Canonical(token)
	}
	return a
}

// Progress sends notifications/progress; false when the client asked for
// none.
func (a *Asker) Progress(_ context.Context, done, total float64, message string) bool {
	if a.token == nil || a.client.Peer == nil {
		return false
	}
	b := make([]byte, 0, 128+len(message))
	b = append(b, `{"message":`...)
	b = strictjson.AppendString(b, message)
	b = append(b, `,"progress":`...)
	b, _ = strictjson.AppendCanonical(b, done)
	b = append(b, `,"progressToken":`...)
	b = append(b, a.token...)
	b = append(b, `,"total":`...)
	b, _ = strictjson.AppendCanonical(b, total)
	b = append(b, '}')
	a.client.Peer.Send(jsonrpc.Notification("notifications/progress", b), a.route, true)
	return true
}

// CanElicit reports whether the client can be sent elicitation/create.
func (a *Asker) CanElicit() bool {
	if a.client.Peer == nil || a.client.Outbound == nil || IsStateless(a.client.Version) {
		return false
	}
	return jsonrpc.Field(a.client.Capabilities, "elicitation") != nil
}

// Elicit asks the client's user a yes/no question about one call.
func (a *Asker) Elicit(ctx context.Context, message string) (callpipe.Answer, error) {
	if !a.CanElicit() {
		return callpipe.Declined, callpipe.ErrNoElicitation
	}
	params := make([]byte, 0, 256+len(message))
	params = append(params, `{"message":`...)
	params = strictjson.AppendString(params, message)
	params = append(params, `,"requestedSchema":{"properties":{"approve":{"description":"Approve this call once","title":"Approve","type":"boolean"}},"required":["approve"],"type":"object"}}`...)
	res, err := a.client.Outbound.Request(ctx, "elicitation/create", params, func(msg []byte) error {
		a.client.Peer.Send(msg, a.route, false)
		return nil
	})
	if err != nil {
		return callpipe.Declined, err
	}
	return ParseElicitAnswer(res)
}

// ParseElicitAnswer reads an elicitation result: accept with approve
// true approves; accept without it, or decline, declines; cancel cancels.
func ParseElicitAnswer(res json.RawMessage) (callpipe.Answer, error) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return callpipe.Declined, fmt.Errorf("elicitation result: %w", err)
	}
	switch r.Action {
	case "accept":
		if yes, _ := r.Content["approve"].(bool); yes {
			return callpipe.Approved, nil
		}
		return callpipe.Declined, nil
	case "decline":
		return callpipe.Declined, nil
	case "cancel":
		return callpipe.Cancelled, nil
	}
	return callpipe.Declined, fmt.Errorf("elicitation result: unknown action %q", r.Action)
}
