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

func TestAdminAuth(t *testing.T) {
	t.Parallel()
	_, srv := adminServer(t)
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		want   int
	}{
		{"no token", "GET", "/admin/status", nil, 401},
		{"agent token", "GET", "/admin/approvals", map[string]string{"Authorization": "Bearer reader-tok"}, 401},
		{"wrong token", "GET", "/admin/approvals", map[string]string{"Authorization": "Bearer admin-to"}, 401},
		{"admin token", "GET", "/admin/status", map[string]string{"Authorization": "Bearer admin-tok"}, 200},
		{"admin token, foreign origin", "GET", "/admin/status", map[string]string{"Authorization": "Bearer admin-tok", "Origin": "https://evil.example"}, 403},
		{"approve unknown id", "POST", "/admin/approvals/ap-nope/approve", map[string]string{"Authorization": "Bearer admin-tok"}, 404},
		{"agent token approving", "POST", "/admin/approvals/ap-nope/approve", map[string]string{"Authorization": "Bearer reader-tok"}, 401},
		{"console without session", "GET", "/ui/", nil, 200}, // the login form
		{"console with a wrong token", "GET", "/ui/?token=nope", nil, 401},
		{"console with the token once", "GET", "/ui/?token=admin-tok", nil, 303},
		{"websocket without session", "GET", "/ui/ws", nil, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if resp := do(t, c.method, srv.URL+c.path, c.hdr, ""); resp.StatusCode != c.want {
				t.Errorf("%s %s: %s, want %d", c.method, c.path, resp.Status, c.want)
			}
		})
	}
}

func TestAdminTokenProblems(t *testing.T) {
	t.Parallel()
	if _, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "same", "READER": "same"}); err == nil || !strings.Contains(err.Error(), "same value as agent \"reader\"") {
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

func TestAuditQuery(t *testing.T) {
	t.Parallel()
	g, srv := adminServer(t)
	old := time.Now().Add(-2 * time.Hour)
	events := []*audit.Event{
		{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow", Time: old},
		{Agent: "reader", Action: "command:call:json-tools:keys", Decision: "deny"},
		{Agent: "editor", Action: "mcp:call:mem:store", Decision: "approval"},
		{Agent: "reader", Action: "command:call:json-tools:query", Decision: "allow"},
	}
	for _, ev := range events {
		if err := g.pipe.Journal().Append(ev); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		query string
		want  []int64 // seqs
	}{
		{"", []int64{1, 2, 3, 4}},
		{"agent=reader", []int64{1, 2, 4}},
		{"decision=allow", []int64{1, 4}},
		{"action=command:call:json-tools:query", []int64{1, 4}},
		{"action=command:call:*", []int64{1, 2, 4}},
		{"since=1h", []int64{2, 3, 4}},
		{"until=1h", []int64{1}},
		{"agent=reader&limit=1", []int64{4}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			t.Parallel()
			resp := do(t, "GET", srv.URL+"/admin/audit?"+c.query, map[string]string{"Authorization": "Bearer admin-tok"}, "")
			var got []audit.Event
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s: %v", resp.Status, err)
			}
			var seqs []int64
			for _, ev := range got {
				seqs = append(seqs, ev.Seq)
			}
			if len(seqs) != len(c.want) {
				t.Fatalf("seqs = %v, want %v", seqs, c.want)
			}
			for i := range seqs {
				if seqs[i] != c.want[i] {
					t.Fatalf("seqs = %v, want %v", seqs, c.want)
				}
			}
		})
	}
	if resp := do(t, "GET", srv.URL+"/admin/audit?since=yesterday", map[string]string{"Authorization": "Bearer admin-tok"}, ""); resp.StatusCode != 400 {
		t.Errorf("bad since: %s, want 400", resp.Status)
	}
	st := g.Status()
	if !st.Audit.OK || st.Audit.Appended != 4 || st.Workspace.Revision == "" || len(st.Surfaces) != 1 || st.Approvals.TTL != "10m0s" || st.Approvals.Wait != "30s" {
		t.Errorf("status = %+v", st)
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
	conn, _, err := dialFeed(t, srv, "?decision=deny", http.Header{"Authorization": {"Bearer admin-tok"}})
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
