package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolgate/toolgate/audit"
)

const adminWorkspace = `version: 1
gateway:
  admin_token: {env: ADMIN}
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    token: {env: READER}
    grants: [pack:json-tools]
`

func openAdminGateway(t *testing.T, yaml string, env map[string]string) (*Gateway, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return Open(context.Background(), path, Options{Getenv: func(k string) string { return env[k] }})
}

func adminServer(t *testing.T) (*Gateway, *httptest.Server) {
	t.Helper()
	g, err := openAdminGateway(t, adminWorkspace, map[string]string{"ADMIN": "admin-tok", "READER": "reader-tok"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	srv := httptest.NewServer(g.Handler(HTTPOptions{}))
	t.Cleanup(srv.Close)
	return g, srv
}

// noRedirect keeps 303s visible to the test.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u string, hdr map[string]string, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

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

func TestConsoleSession(t *testing.T) {
	t.Parallel()
	_, srv := adminServer(t)
	form := url.Values{"token": {"admin-tok"}}.Encode()
	login := do(t, "POST", srv.URL+"/ui/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL}, form)
	if login.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %s", login.Status)
	}
	var cookie *http.Cookie
	for _, c := range login.Cookies() {
		if c.Name == consoleCookie {
			cookie = c
		}
	}
	if cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(cookie.Value, "admin-tok") {
		t.Fatalf("session cookie = %+v, want HttpOnly, SameSite=Strict, not the token", cookie)
	}
	session := "toolgate_console=" + cookie.Value
	other := "http://localhost:9999" // another loopback site: same-site, not same-origin
	cases := []struct {
		name   string
		method string
		path   string
		hdr    map[string]string
		want   int
	}{
		{"status", "GET", "/admin/status", map[string]string{"Cookie": session}, 200},
		{"page", "GET", "/ui/", map[string]string{"Cookie": session}, 200},
		{"approve without the console header", "POST", "/admin/approvals/ap-x/approve", map[string]string{"Cookie": session}, 403},
		{"approve from another loopback origin", "POST", "/admin/approvals/ap-x/approve", map[string]string{"Cookie": session, consoleHeader: "1", "Origin": other}, 403},
		{"approve from the console", "POST", "/admin/approvals/ap-x/approve", map[string]string{"Cookie": session, consoleHeader: "1", "Origin": srv.URL}, 404},
		{"forged session", "GET", "/admin/status", map[string]string{"Cookie": "toolgate_console=deadbeef"}, 401},
		{"login from another origin", "POST", "/ui/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": other}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body := ""
			if c.path == "/ui/login" {
				body = form
			}
			if resp := do(t, c.method, srv.URL+c.path, c.hdr, body); resp.StatusCode != c.want {
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
