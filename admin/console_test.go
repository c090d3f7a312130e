package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestConsoleSession(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	srv := e.srv
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
		{"login with a wrong token", "POST", "/ui/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": srv.URL}, 401},
		{"logout from another origin", "POST", "/ui/logout", map[string]string{"Cookie": session, "Origin": other}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			body := ""
			switch c.name {
			case "login from another origin":
				body = form
			case "login with a wrong token":
				body = url.Values{"token": {"admin-to"}}.Encode()
			}
			if resp := do(t, c.method, srv.URL+c.path, c.hdr, body); resp.StatusCode != c.want {
				t.Errorf("%s %s: %s, want %d", c.method, c.path, resp.Status, c.want)
			}
		})
	}
}

func TestConsoleLogout(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	login := do(t, "POST", e.srv.URL+"/ui/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": e.srv.URL},
		url.Values{"token": {"admin-tok"}}.Encode())
	var session string
	for _, c := range login.Cookies() {
		if c.Name == consoleCookie {
			session = consoleCookie + "=" + c.Value
		}
	}
	if login.StatusCode != http.StatusSeeOther || login.Header.Get("Location") != "/ui/" || session == "" {
		t.Fatalf("token login: %s %q %q", login.Status, login.Header.Get("Location"), session)
	}
	if resp := do(t, "GET", e.srv.URL+"/admin/status", map[string]string{"Cookie": session}, ""); resp.StatusCode != 200 {
		t.Fatalf("status with the session: %s", resp.Status)
	}
	out := do(t, "POST", e.srv.URL+"/ui/logout", map[string]string{"Cookie": session, "Origin": e.srv.URL}, "")
	if out.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %s", out.Status)
	}
	if resp := do(t, "GET", e.srv.URL+"/admin/status", map[string]string{"Cookie": session}, ""); resp.StatusCode != 401 {
		t.Errorf("the ended session still works: %s", resp.Status)
	}
}

func TestConsoleHeaders(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	for _, path := range []string{"/ui/", "/ui/assets/console.js", "/ui/assets/console.css"} {
		resp := do(t, "GET", e.srv.URL+path, nil, "")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != consoleCSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %s CSP %q", path, resp.Status, resp.Header.Get("Content-Security-Policy"))
		}
	}
	if resp := do(t, "GET", e.srv.URL+"/ui", nil, ""); resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/ui/" {
		t.Errorf("/ui: %s %q", resp.Status, resp.Header.Get("Location"))
	}
	if resp := do(t, "GET", e.srv.URL+"/ui/", map[string]string{"Origin": "https://evil.example"}, ""); resp.StatusCode != 403 {
		t.Errorf("console from a foreign origin: %s", resp.Status)
	}
}

func TestConsoleSessionsExpire(t *testing.T) {
	t.Parallel()
	var s consoleSessions
	id := s.create("operator:alice")
	if who, ok := s.valid(id); !ok || who != "operator:alice" {
		t.Fatalf("a new session: %q %v, want operator:alice", who, ok)
	}
	if _, ok := s.valid("other"); ok {
		t.Fatal("a made-up session is valid")
	}
	s.mu.Lock()
	s.m[id] = consoleSession{who: "operator:alice", exp: time.Now().Add(-time.Second)}
	s.mu.Unlock()
	if _, ok := s.valid(id); ok {
		t.Error("an expired session is valid")
	}
	s.create("operator") // prunes the expired one
	s.mu.Lock()
	_, kept := s.m[id]
	s.mu.Unlock()
	if kept {
		t.Error("an expired session was not pruned")
	}
}

// TestConsoleTokenInURL is the attack of a login link: GET /ui/?token=…
// with the right token is refused, says why and how to sign in, and sets
// no session cookie.
func TestConsoleTokenInURL(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, nil)
	resp := do(t, "GET", e.srv.URL+"/ui/?token=admin-tok", nil, "")
	body := readBody(t, resp)
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("GET /ui/?token=: %s, want 400", resp.Status)
	}
	for _, want := range []string{"never taken in a URL", "POST /ui/login", "rotate"} {
		if !strings.Contains(body, want) {
			t.Errorf("answer %q does not say %q", body, want)
		}
	}
	if strings.Contains(body, "admin-tok") {
		t.Errorf("the answer echoes the token: %q", body)
	}
	for _, c := range resp.Cookies() {
		if c.Name == consoleCookie && c.Value != "" {
			t.Errorf("a session was started from a URL token: %+v", c)
		}
	}
}
