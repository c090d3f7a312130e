package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOperatorJWT: with gateway.identity.jwt.operator_claim a JWT of the
// issuer naming a declared operator signs in to the admin API as that
// operator; a token whose claim names no operator, an agent's JWT (agent
// claim only), another issuer's or an expired one are refused.
func TestOperatorJWT(t *testing.T) {
	t.Parallel()
	key := newJWTKey(t, "k1")
	dir := t.TempDir()
	y := strings.Replace(jwtWorkspace, `audience: "https://gw.test"}`, `audience: "https://gw.test", operator_claim: toolgate_operator}
  operators:
    - id: carol`, 1)
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), jwksOf(t, key), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"READER_TOKEN": "static-reader-token", "PATH": os.Getenv("PATH")}
	g, err := Open(context.Background(), ws, Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if !g.admin.On() {
		t.Fatal("the admin API is off with only JWT operators")
	}
	h := g.Handler(HTTPOptions{})
	whoami := func(tok string) (int, string) {
		r := httptest.NewRequest("GET", "/admin/whoami", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var who struct{ Operator string }
		_ = json.Unmarshal(w.Body.Bytes(), &who)
		return w.Code, who.Operator
	}
	carol := with(claimsFor("carol"), "toolgate_operator", "carol")
	cases := []struct {
		name   string
		claims map[string]any
		want   string // "" refused
	}{
		{"carol's JWT", carol, "operator:carol"},
		{"an undeclared operator", with(carol, "toolgate_operator", "mallory"), ""},
		{"an agent's JWT (no operator claim)", claimsFor("reader"), ""},
		{"another issuer", with(carol, "iss", "https://evil.test"), ""},
		{"another audience", with(carol, "aud", "https://other.test"), ""},
		{"expired", with(carol, "exp", int64(1)), ""},
	}
	for _, c := range cases {
		code, who := whoami(key.sign(t, c.claims))
		switch {
		case c.want == "" && code != http.StatusUnauthorized:
			t.Errorf("%s: HTTP %d (%s), want 401", c.name, code, who)
		case c.want != "" && (code != 200 || who != c.want):
			t.Errorf("%s: HTTP %d as %q, want %q", c.name, code, who, c.want)
		}
	}
	// A token signed by a key the issuer does not publish.
	if code, _ := whoami(newJWTKey(t, "k1").sign(t, carol)); code != http.StatusUnauthorized {
		t.Errorf("a forged signature: HTTP %d, want 401", code)
	}
}
