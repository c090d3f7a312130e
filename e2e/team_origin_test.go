package e2e

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestTeamAdminSurfacesTakeNoSecretsInURLs is issue 23 part 6 against the
// built daemon: /mcp takes an Origin only from gateway.allowed_origins (a
// loopback page not listed is refused like a foreign one; no Origin stays
// fine), and the console logs in by POST only — a GET carrying the token
// is refused, says why, and starts no session.
func TestTeamAdminSurfacesTakeNoSecretsInURLs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	y := strings.NewReplacer("ARGVECHO", argvEcho, "WAIT", "1s", "TTL", "1m").Replace(approvalsWorkspace)
	y = strings.Replace(y, "gateway:\n", "gateway:\n  allowed_origins: [\"https://console.example\"]\n", 1)
	d := startDaemon(t, approvalsEnv, "-w", writeFile(t, dir, "toolgate.yaml", y))

	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct {
		name, origin string
		want         int
	}{
		{"no Origin (a non-browser client)", "", http.StatusOK},
		{"a configured origin", "https://console.example", http.StatusOK},
		{"a foreign origin", "https://evil.example", http.StatusForbidden},
		{"a loopback origin not configured", "http://localhost:5173", http.StatusForbidden},
		{"the gateway's own origin (its own pages; the Host is checked too)", d.base, http.StatusOK},
		{"Origin null (a sandboxed page)", "null", http.StatusForbidden},
	} {
		req, _ := http.NewRequest("POST", d.base+"/mcp/notes", strings.NewReader(initialize))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+writerToken)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: HTTP %d, want %d: %s", tc.name, resp.StatusCode, tc.want, body)
		}
		if tc.want == http.StatusForbidden && !strings.Contains(string(body), "gateway.allowed_origins") {
			t.Errorf("%s: the refusal does not name gateway.allowed_origins: %s", tc.name, body)
		}
	}

	// The console: a login link with the token in it is refused.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, path := range []string{"/ui/?token=" + url.QueryEscape(adminToken), "/admin/status?token=" + url.QueryEscape(adminToken)} {
		resp, err := noFollow.Get(d.base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "never taken in a URL") || !strings.Contains(string(body), "POST /ui/login") {
			t.Errorf("GET %s: HTTP %d %s, want 400 saying the token is never taken in a URL", strings.SplitN(path, "?", 2)[0], resp.StatusCode, body)
		}
		if strings.Contains(string(body), adminToken) {
			t.Errorf("the refusal echoes the token: %s", body)
		}
		for _, c := range resp.Cookies() {
			if c.Value != "" {
				t.Errorf("GET %s set cookie %s: a URL token started a session", path, c.Name)
			}
		}
	}
	// The POST login still works.
	req, _ := http.NewRequest("POST", d.base+"/ui/login", strings.NewReader(url.Values{"token": {adminToken}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", d.base)
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) == 0 {
		t.Errorf("POST /ui/login: HTTP %d with %d cookies, want 303 and a session", resp.StatusCode, len(resp.Cookies()))
	}
}
