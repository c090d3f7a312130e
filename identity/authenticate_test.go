package identity

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

const gwAudience = "https://gw.test"

// gwClaims are valid claims for agent, for the gateway at gwAudience.
func gwClaims(agent string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": testIssuer, "aud": gwAudience, "sub": agent, "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
}

func with(c map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range c {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

// gwResource is a Resource verifying tokens of keys published in a file.
func gwResource(t *testing.T, keys ...testKey) *Resource {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks(t, keys...), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := NewResource(Config{Issuer: testIssuer, Audience: gwAudience, JWKSFile: path})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// authServe answers 200 naming the agent Authenticate found, as an MCP
// endpoint would go on to serve it.
func authServe(a *Authenticator, want string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp/{surface}", func(w http.ResponseWriter, r *http.Request) {
		if agent, ok := a.Authenticate(w, r, r.PathValue("surface"), want); ok {
			_, _ = w.Write([]byte(agent))
		}
	})
	return mux
}

func authRequest(h http.Handler, host, tok string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", "/mcp/json-tools", strings.NewReader(`{}`))
	if host != "" {
		r.Host = host
	}
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestAuthenticateJWT(t *testing.T) {
	t.Parallel()
	key, stranger := newECKey(t, "k1"), newECKey(t, "k2")
	declared := map[string]bool{"reader": true, "other": true}
	a := NewAuthenticator(AuthOptions{Tokens: map[string]string{"reader": "static-reader-token"}, JWT: gwResource(t, key),
		Known: func(agent string) bool { return declared[agent] }, Logger: discardLogger()})
	daemon, instance := authServe(a, ""), authServe(a, "reader")
	good := gwClaims("reader")
	algNone := unsigned(map[string]any{"alg": "none", "typ": "JWT"}, good, "")
	// HS256 keyed with the public key's bytes: the classic algorithm confusion.
	pub, _ := json.Marshal(key.public())
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pub}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	confused, _ := jwt.Signed(hs).Claims(good).Serialize()
	const meta = `Bearer resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp/json-tools"`
	cases := []struct {
		name    string
		h       http.Handler
		host    string
		tok     string
		want    string // the agent, or "" for a 401
		errAttr bool   // the challenge carries error="invalid_token"
	}{
		{"static token", daemon, "", "static-reader-token", "reader", false},
		{"valid jwt", daemon, "", sign(t, key, good), "reader", false},
		{"valid jwt, aud is the endpoint's resource URL", daemon, "", sign(t, key, with(good, "aud", "https://gw.test/mcp/json-tools")), "reader", false},
		{"valid jwt for a declared agent without a static token", daemon, "", sign(t, key, gwClaims("other")), "other", false},
		{"per-agent instance, its agent", instance, "", sign(t, key, good), "reader", false},
		{"per-agent instance, its static token", instance, "", "static-reader-token", "reader", false},
		{"no token", daemon, "", "", "", false},
		{"garbage", daemon, "", "not-a-token", "", true},
		{"wrong audience", daemon, "", sign(t, key, with(good, "aud", "https://elsewhere.test")), "", true},
		{"another surface's resource", daemon, "", sign(t, key, with(good, "aud", "https://gw.test/mcp/notes")), "", true},
		{"aud of the Host the caller chose", daemon, "evil.test", sign(t, key, with(good, "aud", "http://evil.test/mcp/json-tools")), "", true},
		{"wrong issuer", daemon, "", sign(t, key, with(good, "iss", "https://evil.test")), "", true},
		{"expired", daemon, "", sign(t, key, with(good, "exp", time.Now().Add(-time.Hour).Unix())), "", true},
		{"no exp", daemon, "", sign(t, key, with(good, "exp", nil)), "", true},
		{"alg none", daemon, "", algNone, "", true},
		{"alg confusion (HS256 with the public key)", daemon, "", confused, "", true},
		{"unknown kid", daemon, "", sign(t, stranger, good), "", true},
		{"undeclared agent", daemon, "", sign(t, key, gwClaims("mallory")), "", true},
		{"per-agent instance, another agent's jwt", instance, "", sign(t, key, gwClaims("other")), "", true},
		{"per-agent instance, a base64 garbage token", instance, "", base64.RawURLEncoding.EncodeToString([]byte("x.y.z")), "", true},
	}
	bodies := map[string]bool{}
	for _, c := range cases {
		w := authRequest(c.h, c.host, c.tok)
		if c.want != "" {
			if w.Code != 200 || w.Body.String() != c.want {
				t.Errorf("%s: HTTP %d %q, want agent %s", c.name, w.Code, w.Body, c.want)
			}
			continue
		}
		if w.Code != 401 {
			t.Errorf("%s: HTTP %d, want 401: %s", c.name, w.Code, w.Body)
			continue
		}
		got := w.Header().Get("WWW-Authenticate")
		if !strings.HasPrefix(got, meta) || strings.Contains(got, `error="invalid_token"`) != c.errAttr {
			t.Errorf("%s: WWW-Authenticate %q", c.name, got)
		}
		if c.errAttr {
			bodies[w.Body.String()] = true
		}
	}
	if len(bodies) != 1 {
		t.Errorf("refusals differ in their body (the reason must stay in the log): %v", bodies)
	}
}

func TestAuthenticateStaticTokens(t *testing.T) {
	t.Parallel()
	a := NewAuthenticator(AuthOptions{Tokens: map[string]string{"reader": "tok-r", "editor": "tok-e"}})
	daemon, instance := authServe(a, ""), authServe(a, "reader")
	cases := []struct {
		name string
		h    http.Handler
		tok  string
		want string
		desc string // in the challenge of a 401
	}{
		{"daemon, reader", daemon, "tok-r", "reader", ""},
		{"daemon, editor", daemon, "tok-e", "editor", ""},
		{"daemon, no token", daemon, "", "", "send Authorization: Bearer <agent token>"},
		{"daemon, unknown token", daemon, "tok-x", "", "not any agent's token"},
		{"instance, its token", instance, "tok-r", "reader", ""},
		{"instance, another agent's token", instance, "tok-e", "", "is not its token"},
		{"instance, no token", instance, "", "", "this instance serves agent reader"},
	}
	for _, c := range cases {
		w := authRequest(c.h, "", c.tok)
		if c.want != "" {
			if w.Code != 200 || w.Body.String() != c.want {
				t.Errorf("%s: HTTP %d %q, want agent %s", c.name, w.Code, w.Body, c.want)
			}
			continue
		}
		if got := w.Header().Get("WWW-Authenticate"); w.Code != 401 || !strings.HasPrefix(got, `Bearer realm="toolgate", error="invalid_token"`) || !strings.Contains(got, c.desc) {
			t.Errorf("%s: HTTP %d, WWW-Authenticate %q; want 401 naming %q", c.name, w.Code, got, c.desc)
		}
	}
	a.ReplaceTokens(map[string]string{"reader": "tok-new"})
	if w := authRequest(daemon, "", "tok-r"); w.Code != 401 {
		t.Errorf("a replaced token still authenticates: HTTP %d", w.Code)
	}
	if w := authRequest(daemon, "", "tok-new"); w.Code != 200 || w.Body.String() != "reader" {
		t.Errorf("the new token: HTTP %d %q", w.Code, w.Body)
	}
}
