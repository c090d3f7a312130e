package identity

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestMetadataURL(t *testing.T) {
	t.Parallel()
	cases := []struct{ resource, want, err string }{
		{resource: "https://gw.example/mcp/notes", want: "https://gw.example/.well-known/oauth-protected-resource/mcp/notes"},
		{resource: "http://127.0.0.1:7330/mcp/json-tools", want: "http://127.0.0.1:7330/.well-known/oauth-protected-resource/mcp/json-tools"},
		{resource: "https://gw.example/mcp/notes/", want: "https://gw.example/.well-known/oauth-protected-resource/mcp/notes"},
		{resource: "https://gw.example", want: "https://gw.example/.well-known/oauth-protected-resource"},
		{resource: "https://gw.example/mcp/a%20b", want: "https://gw.example/.well-known/oauth-protected-resource/mcp/a%20b"},
		{resource: "/mcp/notes", err: "absolute"},
		{resource: "ftp://gw/mcp", err: "absolute"},
		{resource: "https://gw/mcp?x=1", err: "no query"},
		{resource: "https://gw/mcp#f", err: "no query"},
		{resource: "https://u:p@gw/mcp", err: "user info"},
	}
	for _, tc := range cases {
		got, err := MetadataURL(tc.resource)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err %v, want %q", tc.resource, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.resource, got, err, tc.want)
		}
	}
	if got := WellKnownPath("/mcp/notes"); got != "/.well-known/oauth-protected-resource/mcp/notes" {
		t.Errorf("WellKnownPath %q", got)
	}
}

func TestWWWAuthenticate(t *testing.T) {
	t.Parallel()
	const u = "https://gw/.well-known/oauth-protected-resource/mcp/notes"
	cases := []struct {
		name string
		c    Challenge
		want string
	}{
		{"no token", Challenge{}, `Bearer resource_metadata="` + u + `"`},
		{"invalid", Challenge{Error: "invalid_token", Description: "the access token is not valid"},
			`Bearer resource_metadata="` + u + `", error="invalid_token", error_description="the access token is not valid"`},
		{"scope", Challenge{Error: "insufficient_scope", Scopes: []string{"repo:read", "workspace:read"}},
			`Bearer resource_metadata="` + u + `", error="insufficient_scope", scope="repo:read workspace:read"`},
		{"hostile description", Challenge{Error: "invalid_token", Description: "a\"b\\c\r\nSet-Cookie: x"},
			`Bearer resource_metadata="` + u + `", error="invalid_token", error_description="a\"b\\cSet-Cookie: x"`},
	}
	for _, tc := range cases {
		if got := WWWAuthenticate(u, tc.c); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestMetadataHandler(t *testing.T) {
	t.Parallel()
	m, err := NewResourceMetadata("https://gw.example/mcp/notes", testIssuer, []string{"repo:read"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	want := `{"authorization_servers":["https://idp.test"],"bearer_methods_supported":["header"],"resource":"https://gw.example/mcp/notes","resource_name":"toolgate","scopes_supported":["repo:read"]}`
	if string(b) != want {
		t.Fatalf("document\n got %s\nwant %s", b, want)
	}
	post, err := http.Post(srv.URL, "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", post.StatusCode)
	}
	if _, err := NewResourceMetadata("relative/mcp", testIssuer, nil); err == nil {
		t.Fatal("relative resource accepted")
	}
}
