package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/toolgate/toolgate/admin"
	"github.com/toolgate/toolgate/audit"
)

// TestAdminAuth: the admin API and console are mounted on the gateway's
// handler behind the admin token and the gateway's own origin check (the
// admin package's tests hold the full table).
func TestAdminAuth(t *testing.T) {
	t.Parallel()
	_, srv := adminServer(t)
	cases := []struct {
		name string
		path string
		hdr  map[string]string
		want int
	}{
		{"admin token", "/admin/status", map[string]string{"Authorization": "Bearer admin-token-0123456789"}, 200},
		{"agent token", "/admin/approvals", map[string]string{"Authorization": "Bearer reader-tok"}, 401},
		{"admin token from a foreign origin", "/admin/status", map[string]string{"Authorization": "Bearer admin-token-0123456789", "Origin": "https://evil.example"}, 403},
		{"console", "/ui/", nil, 200},
	}
	for _, c := range cases {
		if resp := do(t, "GET", srv.URL+c.path, c.hdr, ""); resp.StatusCode != c.want {
			t.Errorf("%s: %s, want %d", c.name, resp.Status, c.want)
		}
	}
}

func TestAdminTokenProblems(t *testing.T) {
	t.Parallel()
	if _, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "same-secret-0123456789", "READER": "same-secret-0123456789"}); err == nil || !strings.Contains(err.Error(), "same value as agent \"reader\"") {
		t.Errorf("admin token equal to an agent's: err = %v", err)
	}
	g, err := openAdminGateway(t, strings.Replace(adminWorkspace, "  admin_token: {env: ADMIN}\n", "", 1), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	srv := httptest.NewServer(g.Handler(HTTPOptions{}))
	defer srv.Close()
	resp := do(t, "GET", srv.URL+"/admin/status", map[string]string{"Authorization": "Bearer anything"}, "")
	var e struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != 403 || !strings.Contains(e.Error, "set gateway.admin_token") {
		t.Errorf("no admin token configured: %s %q, want 403 saying how to turn it on", resp.Status, e.Error)
	}
}

// TestAuditQuery: /admin/audit reads this gateway's audit.
func TestAuditQuery(t *testing.T) {
	t.Parallel()
	g, srv := adminServer(t)
	for _, agent := range []string{"reader", "editor", "reader"} {
		if err := g.pipe.Journal().Append(&audit.Event{Agent: agent, Action: "command:call:json-tools:query", Decision: "allow"}); err != nil {
			t.Fatal(err)
		}
	}
	resp := do(t, "GET", srv.URL+"/admin/audit?agent=reader", map[string]string{"Authorization": "Bearer admin-token-0123456789"}, "")
	var got []audit.Event
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || len(got) != 2 || got[0].Seq != 1 || got[1].Seq != 3 {
		t.Fatalf("%s: %+v %v", resp.Status, got, err)
	}
}

func dialFeed(t *testing.T, srv *httptest.Server, query string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/ui/ws" + query
	conn, resp, err := websocket.DefaultDialer.Dial(u, hdr)
	if conn != nil {
		t.Cleanup(func() { conn.Close() })
	}
	return conn, resp, err
}

// TestConsoleFeedStreamsFilteredEvents: the console's feed reads this
// gateway's audit as it is appended (the admin API over the gateway's
// audit reader).
func TestConsoleFeedStreamsFilteredEvents(t *testing.T) {
	t.Parallel()
	g, srv := adminServer(t)
	conn, _, err := dialFeed(t, srv, "?decision=deny", http.Header{"Authorization": {"Bearer admin-token-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var first admin.FeedMessage
	if err := conn.ReadJSON(&first); err != nil || first.Type != "approvals" {
		t.Fatalf("first message = %+v, err %v; want the pending approvals", first, err)
	}
	for _, d := range []string{"allow", "deny", "allow", "deny"} {
		if err := g.pipe.Journal().Append(&audit.Event{Agent: "reader", Action: "command:call:json-tools:query", Decision: d}); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []int64{2, 4} {
		var m admin.FeedMessage
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatal(err)
		}
		if m.Type != "event" || m.Event.Seq != want || m.Event.Decision != "deny" {
			t.Fatalf("message = %+v, want deny event seq %d", m, want)
		}
	}
}
