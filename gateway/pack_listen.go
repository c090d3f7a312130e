package gateway

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpserve"
	"github.com/toolgate/toolgate/mcpwire"
)

// listen serves subscriptions/listen on a pack surface: the only change a
// pack surface has is its tool list (a reload can change what the agent
// may call), so only toolsListChanged is honoured. The stream stays open
// until the client closes it; each revision that changes the agent's list
// sends notifications/tools/list_changed tagged with the subscription id.
func (g *Gateway) listen(ctx context.Context, agent, surfaceID string, m *jsonrpc.Message, _ mcpserve.Request, out mcpwire.Peer) (json.RawMessage, json.RawMessage) {
	var p struct {
		Notifications struct {
			ToolsListChanged bool `json:"toolsListChanged"`
		} `json:"notifications"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return nil, jsonrpc.ErrorObject(jsonrpc.CodeInvalidParams, "Invalid params: subscriptions/listen: "+err.Error())
	}
	sub := subscriptionMeta(m.ID)
	ack := []byte(`{"_meta":` + sub + `,"notifications":{`)
	if p.Notifications.ToolsListChanged {
		ack = append(ack, `"toolsListChanged":true`...)
	}
	ack = append(ack, "}}"...)
	out.Send(jsonrpc.Notification("notifications/subscriptions/acknowledged", ack), m.ID, true)
	rev := g.rev.Load()
	list := g.view(agent, surfaceID).list
	for {
		select {
		case <-ctx.Done():
			return nil, nil
		case <-rev.superseded:
		}
		rev = g.rev.Load()
		next := g.view(agent, surfaceID).list
		if p.Notifications.ToolsListChanged && !bytes.Equal(next, list) {
			out.Send(jsonrpc.Notification("notifications/tools/list_changed", []byte(`{"_meta":`+sub+`}`)), m.ID, true)
		}
		list = next
	}
}

// subscriptionMeta is the _meta every message of a subscription carries.
func subscriptionMeta(id json.RawMessage) string {
	b := []byte(`{"io.modelcontextprotocol/subscriptionId":`)
	b = append(b, id...)
	return string(append(b, '}'))
}
