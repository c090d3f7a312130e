package mcpserve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolgate/toolgate/jsonrpc"
	"github.com/toolgate/toolgate/mcpwire"
)

// slowClose is a Session whose Close takes as long as the test says: a
// downstream stdio server that will not exit, which gets its grace
// period, SIGTERM and SIGKILL before it is reaped.
type slowClose struct {
	peer    mcpwire.Peer
	release chan struct{}
	closing chan struct{}
	stopped atomic.Bool
}

func (s *slowClose) HandleClient(_ context.Context, m *jsonrpc.Message) {
	if m.Kind() == jsonrpc.KindRequest {
		reply(s.peer, m, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"t","version":"1"}}`)
	}
}

func (s *slowClose) Close() error {
	close(s.closing)
	<-s.release
	s.stopped.Store(true)
	return nil
}

// TestDeleteAnswersAtOnce: DELETE of a session whose downstream takes long
// to stop is answered while it is still stopping; the stopping session
// holds its place under MaxSessions until it has stopped (deleting and
// reopening in a loop cannot pile up servers), and Close waits for it.
func TestDeleteAnswersAtOnce(t *testing.T) {
	t.Parallel()
	var sessions []*slowClose
	e := NewEndpoint(Options{MaxSessions: 1, Legacy: func(_ context.Context, peer mcpwire.Peer) (Session, error) {
		s := &slowClose{peer: peer, release: make(chan struct{}), closing: make(chan struct{})}
		sessions = append(sessions, s)
		return s, nil
	}})
	srv := httptest.NewServer(e)
	defer srv.Close()
	te := &testEndpoint{e: e, url: srv.URL}
	sid := initialize(t, te.url, "2025-11-25")
	req, _ := http.NewRequest(http.MethodDelete, te.url, nil)
	req.Header.Set(mcpwire.HeaderSessionID, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("DELETE while the session cannot stop: %v %v", resp, err)
	}
	resp.Body.Close()
	s := sessions[0]
	<-s.closing // it is stopping, behind the answer
	if got := readAll(t, post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, mcpwire.HeaderSessionID, sid)); !strings.Contains(got, "initialize again") {
		t.Errorf("the deleted session still answers: %s", got)
	}
	r := post(t, context.Background(), te.url, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`)
	if body := readAll(t, r); r.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a session while the deleted one still stops: %s %s (it must count against the cap)", r.Status, body)
	}
	closed := make(chan struct{})
	go func() { e.Close(); close(closed) }()
	close(s.release)
	<-closed
	if !s.stopped.Load() {
		t.Fatal("Close returned before the deleted session had stopped")
	}
}
