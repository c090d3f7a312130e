package identity

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// TestAuthenticateCallerScopes: an access token's caller is scoped by its
// scope claim (space-separated "scope", or "scp"), and a token without
// the claim is scoped to nothing; a static token is not scoped. The
// caller travels in the request context, never from the body.
func TestAuthenticateCallerScopes(t *testing.T) {
	t.Parallel()
	key := newECKey(t, "k1")
	a := NewAuthenticator(AuthOptions{Tokens: map[string]string{"reader": "static-reader-token"}, JWT: gwResource(t, key),
		Known: func(agent string) bool { return agent == "reader" }, Logger: discardLogger()})
	good := gwClaims("reader")
	cases := []struct {
		name   string
		tok    string
		scoped bool
		scopes []string
	}{
		{"static token", "static-reader-token", false, nil},
		{"scope claim", sign(t, key, with(good, "scope", "notes:read  repo:read")), true, []string{"notes:read", "repo:read"}},
		{"scp list", sign(t, key, with(good, "scp", []string{"notes:read"})), true, []string{"notes:read"}},
		{"no claim", sign(t, key, good), true, nil},
		{"empty claim", sign(t, key, with(good, "scope", "")), true, nil},
		// Hostile shapes grant nothing they do not spell out.
		{"scope as a number", sign(t, key, with(good, "scope", 7)), true, nil},
		{"scope as an object", sign(t, key, with(good, "scope", map[string]any{"notes:write": true})), true, nil},
		{"scp with a non-string", sign(t, key, with(good, "scp", []any{"notes:read", 1})), true, nil},
		{"a NUL is not a separator", sign(t, key, with(good, "scope", "notes:read\x00notes:write")), true, []string{"notes:read\x00notes:write"}},
		{"scope wins over scp", sign(t, key, with(with(good, "scope", "a"), "scp", []string{"b"})), true, []string{"a"}},
	}
	for _, c := range cases {
		r := httptest.NewRequest("POST", "/mcp/json-tools", strings.NewReader(`{"scope":"everything"}`))
		r.Header.Set("Authorization", "Bearer "+c.tok)
		got, ok := a.AuthenticateCaller(httptest.NewRecorder(), r, "json-tools", "")
		if !ok || got.Agent != "reader" || got.TokenScoped != c.scoped || !slices.Equal(got.Scopes, c.scopes) {
			t.Errorf("%s: %+v %v, want scoped %v to %v", c.name, got, ok, c.scoped, c.scopes)
		}
		back, ok := CallerFrom(WithCaller(context.Background(), got))
		if !ok || back.Agent != got.Agent || !slices.Equal(back.Scopes, got.Scopes) {
			t.Errorf("%s: the context gives back %+v", c.name, back)
		}
	}
	if _, ok := CallerFrom(context.Background()); ok {
		t.Error("a caller outside any authenticated request")
	}
	r := httptest.NewRequest("POST", "/mcp/json-tools", nil)
	w := httptest.NewRecorder()
	if c, ok := a.AuthenticateCaller(w, r, "json-tools", ""); ok || c.Agent != "" || w.Code != http.StatusUnauthorized {
		t.Errorf("no token: %+v %v %d", c, ok, w.Code)
	}
}
