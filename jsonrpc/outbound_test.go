package jsonrpc

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestOutbound: a request toolgate makes of its client gets an id of its
// own prefix and waits for the response with that id only.
func TestOutbound(t *testing.T) {
	t.Parallel()
	o := NewOutbound("tg-")
	var sent []*Message
	answer := func(result, rpcErr string) func([]byte) error {
		return func(b []byte) error {
			m, err := ParseMessage(b)
			if err != nil {
				return err
			}
			sent = append(sent, m)
			go func() {
				// A response to some other request is not this one's.
				if o.Deliver(&Message{ID: IntID(1), Result: []byte(`{}`)}) {
					t.Error("delivered a response for another id")
				}
				r := &Message{ID: m.ID}
				if rpcErr != "" {
					r.Error = []byte(rpcErr)
				} else {
					r.Result = []byte(result)
				}
				o.Deliver(r)
			}()
			return nil
		}
	}
	res, err := o.Request(context.Background(), "elicitation/create", []byte(`{"m":1}`), answer(`{"action":"accept"}`, ""))
	if err != nil || string(res) != `{"action":"accept"}` {
		t.Fatalf("%s %v", res, err)
	}
	if string(sent[0].ID) != `"tg-1"` || sent[0].Method != "elicitation/create" || string(sent[0].Params) != `{"m":1}` {
		t.Errorf("sent %+v", sent[0])
	}
	_, err = o.Request(context.Background(), "roots/list", nil, answer("", `{"code":-1,"message":"no roots"}`))
	var rpc *RPCError
	if !errors.As(err, &rpc) || rpc.Code != -1 || rpc.Message != "no roots" || string(sent[1].ID) != `"tg-2"` {
		t.Errorf("error answer: %v", err)
	}
	if _, err := o.Request(context.Background(), "x", nil, func([]byte) error { return errors.New("client gone") }); err == nil || err.Error() != "client gone" {
		t.Errorf("send failure: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := o.Request(ctx, "sampling/createMessage", nil, func([]byte) error { return nil }); !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "sampling/createMessage:") {
		t.Errorf("unanswered: %v", err)
	}
	if o.Deliver(&Message{ID: []byte(`"tg-4"`), Result: []byte(`{}`)}) {
		t.Error("a late response found its abandoned request")
	}
}
