package admin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
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
		{"token in another scheme", "GET", "/admin/status", map[string]string{"Authorization": "Basic admin-tok"}, 401},
		{"admin token", "GET", "/admin/status", adminAuth, 200},
		{"admin token, foreign origin", "GET", "/admin/status", map[string]string{"Authorization": "Bearer admin-tok", "Origin": "https://evil.example"}, 403},
		{"approve unknown id", "POST", "/admin/approvals/ap-nope/approve", adminAuth, 404},
		{"agent token approving", "POST", "/admin/approvals/ap-nope/approve", map[string]string{"Authorization": "Bearer reader-tok"}, 401},
		{"console without session", "GET", "/ui/", nil, 200}, // the login form
		// Attack: a token in a URL is refused, right or wrong, and starts
		// no session (TestConsoleTokenInURL checks the answer says why).
		{"console with a wrong token in the URL", "GET", "/ui/?token=nope", nil, 400},
		{"console with the token in the URL", "GET", "/ui/?token=admin-tok", nil, 400},
		{"api with the token in the URL", "GET", "/admin/status?token=admin-tok", nil, 400},
		{"api with access_token in the URL", "GET", "/admin/approvals?access_token=admin-tok", nil, 400},
		{"websocket without session", "GET", "/ui/ws", nil, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			resp := do(t, c.method, e.srv.URL+c.path, c.hdr, "")
			if resp.StatusCode != c.want {
				t.Errorf("%s %s: %s, want %d", c.method, c.path, resp.Status, c.want)
			}
			if resp.StatusCode == 401 && strings.HasPrefix(c.path, "/admin/") && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), `Bearer realm="toolgate-admin"`) {
				t.Errorf("401 without the admin challenge: %q", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestAdminOff(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, func(o *Options) { o.Token, o.Off = "", "the admin API is off: set gateway.admin_token: {env: NAME}" })
	if e.s.On() || e.s.IsToken("") || e.s.IsToken("admin-tok") {
		t.Fatal("an admin server without a token is on")
	}
	resp := do(t, "GET", e.srv.URL+"/admin/status", map[string]string{"Authorization": "Bearer anything"}, "")
	var body struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 403 || !strings.Contains(body.Error, "set gateway.admin_token") {
		t.Errorf("admin API off: %s %q, want 403 saying how to turn it on", resp.Status, body.Error)
	}
	if resp := do(t, "GET", e.srv.URL+"/ui/", nil, ""); resp.StatusCode != 403 {
		t.Errorf("console off: %s, want 403", resp.Status)
	}
	// No token and no reason given: still off.
	if New(Options{}).On() {
		t.Error("New(Options{}) is on")
	}
}

func TestIsToken(t *testing.T) {
	t.Parallel()
	s := New(Options{Token: "admin-tok"})
	for tok, want := range map[string]bool{"admin-tok": true, "admin-to": false, "": false, "ADMIN-TOK": false} {
		if got := s.IsToken(tok); got != want {
			t.Errorf("IsToken(%q) = %v", tok, got)
		}
	}
}

// TestGuardWraps: another operator-only route behind Guard runs only for
// the admin.
func TestGuardWraps(t *testing.T) {
	t.Parallel()
	s := New(Options{Token: "admin-tok"})
	h := s.Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("metrics")) }))
	for tok, want := range map[string]int{"admin-tok": 200, "agent": 401, "": 401} {
		r := httptest.NewRequest("GET", "/metrics", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want || (want == 200) != (w.Body.String() == "metrics") {
			t.Errorf("token %q: HTTP %d %q", tok, w.Code, w.Body)
		}
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	resp := do(t, "GET", e.srv.URL+"/admin/status", adminAuth, "")
	var st map[string]string
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st["version"] != "test" || resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("status: %v %v %q", st, err, resp.Header.Get("Cache-Control"))
	}
}
