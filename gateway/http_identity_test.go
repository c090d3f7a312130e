package gateway

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

const jwtWorkspace = `version: 1
gateway:
  identity:
    jwt: {issuer: "https://idp.test", jwks_file: jwks.json, audience: "https://gw.test"}
command_packs:
  - use: bundled/json-tools
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants: [pack:json-tools]
  - id: other
    grants: [pack:json-tools]
`

// jwtKey is a signing key the test owns; tokens are signed by go-jose.
type jwtKey struct {
	kid  string
	priv *ecdsa.PrivateKey
}

func newJWTKey(t *testing.T, kid string) jwtKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jwtKey{kid: kid, priv: k}
}

func (k jwtKey) sign(t *testing.T, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func jwksOf(t *testing.T, keys ...jwtKey) []byte {
	t.Helper()
	set := jose.JSONWebKeySet{}
	for _, k := range keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.priv.PublicKey, KeyID: k.kid, Algorithm: "ES256", Use: "sig"})
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func claimsFor(agent string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": "https://idp.test", "aud": "https://gw.test", "sub": agent,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix()}
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

// jwtGateway opens the JWT workspace with key published in jwks.json.
func jwtGateway(t *testing.T, keys ...jwtKey) (*Gateway, string) {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "toolgate.yaml")
	if err := os.WriteFile(ws, []byte(jwtWorkspace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), jwksOf(t, keys...), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"READER_TOKEN": "static-reader-token", "PATH": os.Getenv("PATH")}
	g, err := Open(context.Background(), ws, Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g, dir
}

func TestJWTIdentify(t *testing.T) {
	t.Parallel()
	key, stranger := newJWTKey(t, "k1"), newJWTKey(t, "k2")
	g, _ := jwtGateway(t, key)
	daemon := g.Handler(HTTPOptions{})
	instance := g.Handler(HTTPOptions{Agent: "reader"})
	good := claimsFor("reader")
	header, _ := json.Marshal(map[string]any{"alg": "none", "typ": "JWT"})
	payload, _ := json.Marshal(good)
	algNone := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
	// HS256 keyed with the public key's bytes: the classic algorithm confusion.
	pub, _ := json.Marshal(jose.JSONWebKey{Key: &key.priv.PublicKey})
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pub}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	confused, _ := jwt.Signed(hs).Claims(good).Serialize()
	const meta = `Bearer resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp/json-tools"`
	cases := []struct {
		name    string
		h       http.Handler
		host    string
		tok     string
		want    int
		errAttr bool // the challenge carries error="invalid_token"
	}{
		{"static token", daemon, "", "static-reader-token", 200, false},
		{"valid jwt", daemon, "", key.sign(t, good), 200, false},
		{"valid jwt, aud is the endpoint's resource URL", daemon, "", key.sign(t, with(good, "aud", "https://gw.test/mcp/json-tools")), 200, false},
		{"valid jwt for a declared agent without a static token", daemon, "", key.sign(t, claimsFor("other")), 200, false},
		{"per-agent instance, its agent", instance, "", key.sign(t, good), 200, false},
		{"per-agent instance, its static token", instance, "", "static-reader-token", 200, false},
		{"no token", daemon, "", "", 401, false},
		{"garbage", daemon, "", "not-a-token", 401, true},
		{"wrong audience", daemon, "", key.sign(t, with(good, "aud", "https://elsewhere.test")), 401, true},
		{"another surface's resource", daemon, "", key.sign(t, with(good, "aud", "https://gw.test/mcp/notes")), 401, true},
		{"aud of the Host the caller chose", daemon, "evil.test", key.sign(t, with(good, "aud", "http://evil.test/mcp/json-tools")), 401, true},
		{"wrong issuer", daemon, "", key.sign(t, with(good, "iss", "https://evil.test")), 401, true},
		{"expired", daemon, "", key.sign(t, with(good, "exp", time.Now().Add(-time.Hour).Unix())), 401, true},
		{"no exp", daemon, "", key.sign(t, with(good, "exp", nil)), 401, true},
		{"alg none", daemon, "", algNone, 401, true},
		{"alg confusion (HS256 with the public key)", daemon, "", confused, 401, true},
		{"unknown kid", daemon, "", stranger.sign(t, good), 401, true},
		{"undeclared agent", daemon, "", key.sign(t, claimsFor("mallory")), 401, true},
		{"per-agent instance, another agent's jwt", instance, "", key.sign(t, claimsFor("other")), 401, true},
	}
	var bodies = map[string]bool{}
	for _, c := range cases {
		w := initialize(t, c.h, c.host, "/mcp/json-tools", c.tok)
		if w.Code != c.want {
			t.Errorf("%s: HTTP %d, want %d: %s", c.name, w.Code, c.want, w.Body)
			continue
		}
		if c.want != 401 {
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

func TestJWTKeyRotationFromFile(t *testing.T) {
	t.Parallel()
	old, next := newJWTKey(t, "old"), newJWTKey(t, "new")
	g, dir := jwtGateway(t, old)
	h := g.Handler(HTTPOptions{})
	if w := initialize(t, h, "", "/mcp/json-tools", next.sign(t, claimsFor("reader"))); w.Code != 401 {
		t.Fatalf("a key not yet published: HTTP %d", w.Code)
	}
	tmp := filepath.Join(dir, ".jwks.tmp")
	if err := os.WriteFile(tmp, jwksOf(t, next), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, "jwks.json")); err != nil {
		t.Fatal(err)
	}
	// The file is re-checked at most every second: poll until the new key
	// is in force, with a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for initialize(t, h, "", "/mcp/json-tools", next.sign(t, claimsFor("reader"))).Code != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the rotated key was never picked up")
		}
		time.Sleep(50 * time.Millisecond) // polling a condition
	}
	deadline = time.Now().Add(10 * time.Second)
	for initialize(t, h, "", "/mcp/json-tools", old.sign(t, claimsFor("reader"))).Code != 401 {
		if time.Now().After(deadline) {
			t.Fatal("the retired key still verifies")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestResourceMetadata(t *testing.T) {
	t.Parallel()
	g, _ := jwtGateway(t, newJWTKey(t, "k"))
	h := g.Handler(HTTPOptions{})
	get := func(method, path string) (*httptest.ResponseRecorder, map[string]any) {
		r := httptest.NewRequest(method, path, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var doc map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &doc)
		return w, doc
	}
	w, doc := get("GET", "/.well-known/oauth-protected-resource/mcp/json-tools")
	if w.Code != 200 || doc["resource"] != "https://gw.test/mcp/json-tools" || doc["authorization_servers"].([]any)[0] != "https://idp.test" {
		t.Fatalf("metadata: HTTP %d %v", w.Code, doc)
	}
	// An undeclared surface gets the same kind of answer: existence is
	// not disclosed to an unauthenticated caller.
	w2, doc2 := get("GET", "/.well-known/oauth-protected-resource/mcp/no-such-surface")
	if w2.Code != 200 || doc2["resource"] != "https://gw.test/mcp/no-such-surface" || len(doc2) != len(doc) {
		t.Fatalf("undeclared surface: HTTP %d %v", w2.Code, doc2)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp/a%22b", "/.well-known/oauth-protected-resource/mcp/", "/.well-known/oauth-protected-resource"} {
		if w, _ := get("GET", path); w.Code != 404 {
			t.Errorf("%s: HTTP %d, want 404", path, w.Code)
		}
	}
	if w, _ := get("POST", "/.well-known/oauth-protected-resource/mcp/json-tools"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: HTTP %d", w.Code)
	}
	// Without gateway.identity.jwt there is nothing to describe.
	plain := openTestGateway(t, "")
	r := httptest.NewRequest("GET", "/.well-known/oauth-protected-resource/mcp/json-tools", nil)
	rw := httptest.NewRecorder()
	plain.Handler(HTTPOptions{}).ServeHTTP(rw, r)
	if rw.Code != 404 {
		t.Errorf("no jwt identity: HTTP %d", rw.Code)
	}
}
