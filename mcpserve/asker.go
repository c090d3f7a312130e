package mcpserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
	"github.com/toolgate/toolgate/strictjson"
)

// Asker reaches the client of one request while the gateway holds it for
// approval: notifications/progress on the request's own stream when the
// client sent a progress token, and elicitation/create when the client
// declared elicitation and speaks a protocol that lets a server send
// requests mid-call (up to 2025-11-25; 2026-07-28 asks through
// input-required results instead). It speaks MCP only: the gateway adapts
// it to what its call pipeline asks of a caller.
type Asker struct {
	client mcpwire.Client
	route  json.RawMessage
	token  []byte
}

// Answer is the client's user's reply to an elicitation.
type Answer int

// The answers.
const (
	Declined  Answer = iota // the user said no (or the answer was not a yes)
	Approved                // the user said yes
	Cancelled               // the user dismissed the question
)

// ErrNoElicitation is Elicit's error when the client cannot be asked (it
// declared no elicitation, or its protocol has no way to).
var ErrNoElicitation = errors.New("the client cannot be asked")

// NewAsker returns the asker of the request route of client; token is the
// request's _meta.progressToken as parsed (nil: no progress).
func NewAsker(client mcpwire.Client, route json.RawMessage, token any) *Asker {
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
	if a.client.Peer == nil || a.client.Outbound == nil || mcpwire.IsStateless(a.client.Version) {
		return false
	}
	return jsonrpc.Field(a.client.Capabilities, "elicitation") != nil
}

// Elicit asks the client's user a yes/no question about one call;
// ErrNoElicitation when the client cannot be asked.
func (a *Asker) Elicit(ctx context.Context, message string) (Answer, error) {
	if !a.CanElicit() {
		return Declined, ErrNoElicitation
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
		return Declined, err
	}
	return ParseElicitAnswer(res)
}

// ParseElicitAnswer reads an elicitation result: accept with approve
// true approves; accept without it, or decline, declines; cancel cancels.
func ParseElicitAnswer(res json.RawMessage) (Answer, error) {
	var r struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return Declined, fmt.Errorf("elicitation result: %w", err)
	}
	switch r.Action {
	case "accept":
		if yes, _ := r.Content["approve"].(bool); yes {
			return Approved, nil
		}
		return Declined, nil
	case "decline":
		return Declined, nil
	case "cancel":
		return Cancelled, nil
	}
	return Declined, fmt.Errorf("elicitation result: unknown action %q", r.Action)
}
