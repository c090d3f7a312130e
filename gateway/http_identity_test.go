package gateway

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

// TestJWTIdentify: the gateway's HTTP front authenticates with package
// identity (whose table of token attacks is in identity's tests): static
// tokens and access tokens alike, the agent a token names must be declared
// in the workspace in force, a per-agent instance takes only its agent's,
// and a refusal is the RFC 9728 challenge naming this endpoint's metadata.
func TestJWTIdentify(t *testing.T) {
	t.Parallel()
	key := newJWTKey(t, "k1")
	g, _ := jwtGateway(t, key)
	daemon := g.Handler(HTTPOptions{})
	instance := g.Handler(HTTPOptions{Agent: "reader"})
	const meta = `Bearer resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp/json-tools"`
	cases := []struct {
		name string
		h    http.Handler
		tok  string
		want int
	}{
		{"static token", daemon, "static-reader-token", 200},
		{"valid jwt", daemon, key.sign(t, claimsFor("reader")), 200},
		{"valid jwt for a declared agent without a static token", daemon, key.sign(t, claimsFor("other")), 200},
		{"per-agent instance, its agent", instance, key.sign(t, claimsFor("reader")), 200},
		{"no token", daemon, "", 401},
		{"wrong audience", daemon, key.sign(t, with(claimsFor("reader"), "aud", "https://elsewhere.test")), 401},
		{"undeclared agent", daemon, key.sign(t, claimsFor("mallory")), 401},
		{"per-agent instance, another agent's jwt", instance, key.sign(t, claimsFor("other")), 401},
	}
	for _, c := range cases {
		w := initialize(t, c.h, "", "/mcp/json-tools", c.tok)
		if w.Code != c.want {
			t.Errorf("%s: HTTP %d, want %d: %s", c.name, w.Code, c.want, w.Body)
			continue
		}
		if c.want == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), meta) {
			t.Errorf("%s: WWW-Authenticate %q", c.name, w.Header().Get("WWW-Authenticate"))
		}
	}
}

// TestResourceMetadata: the gateway serves each endpoint's
// protected-resource metadata at the well-known path, and nothing without
// gateway.identity.jwt.
func TestResourceMetadata(t *testing.T) {
	t.Parallel()
	g, _ := jwtGateway(t, newJWTKey(t, "k"))
	get := func(g *Gateway, path string) (*httptest.ResponseRecorder, map[string]any) {
		w := httptest.NewRecorder()
		g.Handler(HTTPOptions{}).ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		var doc map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &doc)
		return w, doc
	}
	w, doc := get(g, "/.well-known/oauth-protected-resource/mcp/json-tools")
	if w.Code != 200 || doc["resource"] != "https://gw.test/mcp/json-tools" || doc["authorization_servers"].([]any)[0] != "https://idp.test" {
		t.Fatalf("metadata: HTTP %d %v", w.Code, doc)
	}
	if w, _ := get(g, "/.well-known/oauth-protected-resource"); w.Code != 404 {
		t.Errorf("the bare prefix: HTTP %d", w.Code)
	}
	if w, _ := get(openTestGateway(t, ""), "/.well-known/oauth-protected-resource/mcp/json-tools"); w.Code != 404 {
		t.Errorf("no jwt identity: HTTP %d", w.Code)
	}
}
