package mcpwire

import (
	"context"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
)

// TestRequests: a request's context ends with its own, with the session,
// or with the client's notifications/cancelled naming it — by its raw id
// (the number 1 and the string "1" are different requests).
func TestRequests(t *testing.T) {
	t.Parallel()
	var q Requests
	session, endSession := context.WithCancel(context.Background())
	a, doneA := q.Start(context.Background(), session, jsonrpc.IntID(1))
	b, doneB := q.Start(context.Background(), session, jsonrpc.Quote("1"))
	defer doneB()
	if q.Cancel([]byte(`{"requestId":2}`)) {
		t.Error("cancelled an unknown request")
	}
	if !q.Cancel([]byte(`{"requestId":1,"reason":"user"}`)) || a.Err() == nil {
		t.Error("request 1 not cancelled")
	}
	if b.Err() != nil {
		t.Error(`request "1" cancelled with request 1`)
	}
	doneA()
	if q.Cancel([]byte(`{"requestId":1}`)) {
		t.Error("a finished request is still known")
	}
	endSession()
	<-b.Done()
	parent, cancelParent := context.WithCancel(context.Background())
	c, doneC := q.Start(parent, context.Background(), jsonrpc.IntID(3))
	defer doneC()
	cancelParent()
	<-c.Done()
}
