package mcpproxy

import (
	"bytes"
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/mcpproxy/internal/servertest"
	"github.com/toolgate/toolgate/mcpproxy/transport"
	"github.com/toolgate/toolgate/mcpwire"
)

// relayGoroutines counts the goroutines of sessions and HTTP connections
// of this package: a reader, a GET stream, a response being read.
func relayGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		s := string(g)
		if strings.Contains(s, "mcpproxy.(*Session)") || strings.Contains(s, "transport.(*streamConn)") {
			n++
		}
	}
	return n
}

// TestIdleSessionListensOnDemand: a session of a client whose transport
// says when it listens holds no goroutine and no GET stream while idle
// (initialize, initialized, nothing else); once the client listens, the
// downstream GET stream opens and what the server sends of its own
// accord reaches the client. Not parallel: it counts the goroutines of
// the whole package, and parallel tests wait while it runs.
func TestIdleSessionListensOnDemand(t *testing.T) {
	srv, url := servertest.GoServer(t)
	rec := newRecorder()
	sig := &mcpwire.ListenSignal{}
	startSessionIn(t, mcpwire.WithListen(context.Background(), sig), &transport.Config{ID: "go", URL: url, Timeout: 10 * time.Second}, rec, Hooks{CallTool: forwardAll})
	servertest.WaitFor(t, "an idle session without goroutines", func() bool { return relayGoroutines() == 0 })

	sig.Listen()
	servertest.WaitFor(t, "a notification on the GET stream", func() bool {
		srv.SendNotificationToAllClients("notifications/message", map[string]any{"level": "info", "data": "unprompted"})
		return rec.has("unprompted")
	})
	if got := rec.wait(t, "unprompted"); got.route != "" || !got.droppable {
		t.Errorf("the notification was sent %+v, want no route, droppable", got)
	}
	if relayGoroutines() == 0 {
		t.Error("a listening session holds no GET stream")
	}
}

// TestSessionListensWithoutSignal: a session started without a signal (a
// stdio client, which can always be written to) listens from the start.
func TestSessionListensWithoutSignal(t *testing.T) {
	t.Parallel()
	srv, url := servertest.GoServer(t)
	rec := newRecorder()
	startSession(t, &transport.Config{ID: "go", URL: url, Timeout: 10 * time.Second}, rec, Hooks{CallTool: forwardAll})
	servertest.WaitFor(t, "a notification on the GET stream", func() bool {
		srv.SendNotificationToAllClients("notifications/message", map[string]any{"level": "info", "data": "unprompted"})
		return rec.has("unprompted")
	})
}
