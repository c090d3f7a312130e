package admin

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/audit"
)

func dialFeed(t *testing.T, srv *httptest.Server, query string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ui/ws" + query
	conn, resp, err := websocket.DefaultDialer.Dial(u, hdr)
	if conn != nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

func TestConsoleFeedChecksOrigin(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, func(o *Options) { o.AllowedOrigins = []string{"http://localhost:7777"} })
	srv := e.srv
	cases := []struct {
		origin string
		ok     bool
	}{
		{"", true},
		{srv.URL, true},
		{"http://localhost:7777", true},  // listed in gateway.allowed_origins
		{"http://localhost:9999", false}, // another loopback site
		{"https://evil.example", false},
	}
	for _, c := range cases {
		t.Run(c.origin, func(t *testing.T) {
			t.Parallel()
			hdr := http.Header{"Authorization": {"Bearer admin-tok"}}
			if c.origin != "" {
				hdr.Set("Origin", c.origin)
			}
			_, resp, err := dialFeed(t, srv, "", hdr)
			if c.ok && err != nil {
				t.Fatalf("dial: %v", err)
			}
			if !c.ok && (err == nil || resp == nil || resp.StatusCode != http.StatusForbidden) {
				t.Fatalf("dial from %s: err %v resp %v, want 403", c.origin, err, resp)
			}
		})
	}
	if _, resp, err := dialFeed(t, srv, "", http.Header{"Authorization": {"Bearer reader-tok"}}); err == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("feed with an agent token: err %v, want 401", err)
	}
}

func TestConsoleFeedStreamsFilteredEvents(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	conn, _, err := dialFeed(t, e.srv, "?decision=deny", http.Header{"Authorization": {"Bearer admin-tok"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var first FeedMessage
	if err := conn.ReadJSON(&first); err != nil || first.Type != "approvals" || len(first.Pending) != 0 {
		t.Fatalf("first message = %+v, err %v; want the (empty) pending approvals", first, err)
	}
	for _, d := range []string{"allow", "deny", "allow", "deny"} {
		if err := e.log.Append(&audit.Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: d}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []int64{2, 4} {
		var m FeedMessage
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		if m.Type != "event" || m.Event.Seq != want || m.Event.Decision != "deny" {
			t.Fatalf("message = %+v, want deny event seq %d", m, want)
		}
	}
	// A call held anywhere in the deployment reaches the feed.
	id := e.hold(t, "writer", "command:call:vault:stash")
	for {
		var m FeedMessage
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		if m.Type == "approvals" && len(m.Pending) == 1 && m.Pending[0].ID == id {
			break
		}
	}
}
