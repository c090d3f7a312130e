package gateway

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHTTPFront: the MCP endpoints' door — origin, content type, identity,
// and the same 404 for a surface that does not exist and one the agent
// holds nothing on.
func TestHTTPFront(t *testing.T) {
	t.Parallel()
	g := openYAML(t, adminWorkspace, map[string]string{"READER": "reader-token-0123456789", "ADMIN": "admin-token-0123456789"})
	h := g.Handler(HTTPOptions{})
	post := func(path, ctype, tok, origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`))
		r.Header.Set("Content-Type", ctype)
		r.Header.Set("Accept", "application/json, text/event-stream")
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	cases := []struct {
		name, path, ctype, tok, origin string
		want                           int
	}{
		{"initialize", "/mcp/json-tools", "application/json", "reader-token-0123456789", "", 200},
		{"json with a charset", "/mcp/json-tools", "application/json; charset=utf-8", "reader-token-0123456789", "", 200},
		{"text/plain (a form a page can post)", "/mcp/json-tools", "text/plain", "reader-token-0123456789", "", http.StatusUnsupportedMediaType},
		{"foreign origin", "/mcp/json-tools", "application/json", "reader-token-0123456789", "https://evil.example", http.StatusForbidden},
		{"no token", "/mcp/json-tools", "application/json", "", "", http.StatusUnauthorized},
		{"the admin token is no agent's", "/mcp/json-tools", "application/json", "admin-token-0123456789", "", http.StatusUnauthorized},
		{"no such surface", "/mcp/nope", "application/json", "reader-token-0123456789", "", http.StatusNotFound},
	}
	for _, c := range cases {
		if w := post(c.path, c.ctype, c.tok, c.origin); w.Code != c.want {
			t.Errorf("%s: HTTP %d, want %d: %s", c.name, w.Code, c.want, w.Body)
		}
	}
	e1, ok1 := g.endpoint(t.Context(), "reader", "json-tools")
	e2, ok2 := g.endpoint(t.Context(), "reader", "json-tools")
	if !ok1 || !ok2 || e1 != e2 {
		t.Error("one endpoint per (agent, surface), built once")
	}
}

func TestIsJSONBody(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{"application/json": true, "Application/JSON; charset=utf-8": true, "application/json-seq": false, "text/plain": false, "": false} {
		r := httptest.NewRequest("POST", "/", nil)
		r.Header.Set("Content-Type", ct)
		if got := isJSONBody(r); got != want {
			t.Errorf("isJSONBody(%q) = %v", ct, got)
		}
	}
}
