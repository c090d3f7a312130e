package e2e

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// jwtWorkspace puts the downstream behind toolgate with OAuth access
// tokens accepted beside static ones; KEYS is jwks_url: … or jwks_file: ….
const jwtWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  identity:
    jwt: {issuer: "ISSUER", KEYS, audience: "https://toolgate.test"}
credentials:
  down: {env: DOWN_KEY}
mcp_servers:
  - id: down
    url: DOWNURL
    headers: {X-Downstream-Key: "{credential.down}"}
    effects: {greet: read, ping: read}
agents:
  - id: reader
    token: {env: READER_TOKEN}
    grants: [server:down]
  - id: ci
    grants: [tool:down:ping]
`

const jwtAudience = "https://toolgate.test"

func jwtClaims(iss, agent string) map[string]any {
	now := time.Now()
	return map[string]any{"iss": iss, "aud": jwtAudience, "sub": agent, "iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix()}
}

func withClaim(c map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range c {
		out[kk] = vv
	}
	out[k] = v
	return out
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"1"}}}`

// TestJWTIdentity runs the built daemon with gateway.identity.jwt, keys
// served on loopback (jwks_url) and from a file (jwks_file), and tokens
// this test signs: a valid token gets its agent's grants (and only them);
// wrong audience, wrong issuer, expired, alg none, unknown kid and an
// undeclared agent are each a 401 carrying the resource metadata pointer,
// with one generic body and the reason in the operator's log; the metadata
// document is served without a token; a rotated key file is picked up;
// and neither the agent's JWT nor its static token reaches the downstream
// server, which sees only the header the workspace declares.
func TestJWTIdentity(t *testing.T) {
	t.Parallel()
	for _, keys := range []string{"url", "file"} {
		t.Run(keys, func(t *testing.T) {
			t.Parallel()
			idpKey, rotated, stranger := newSigner(t, "k1"), newSigner(t, "k2"), newSigner(t, "k3")
			idp := newJWKSServer(t, jwksDoc(t, idpKey))
			iss := idp.srv.URL // an http issuer is allowed on loopback
			down := newDownstream(t, "Greets someone.")
			dir := t.TempDir()
			jwksPath := writeFile(t, dir, "jwks.json", string(jwksDoc(t, idpKey)))
			src := `jwks_url: "` + idp.srv.URL + `/jwks"`
			if keys == "file" {
				src = "jwks_file: jwks.json"
			}
			ws := writeFile(t, dir, "toolgate.yaml", strings.NewReplacer("ISSUER", iss, "KEYS", src, "DOWNURL", down.URL).Replace(jwtWorkspace))
			d := startFleetDaemon(t, ws, []string{"READER_TOKEN=static-reader-token", "DOWN_KEY=down-secret"})
			endpoint := d.base + "/mcp/down"
			good := jwtClaims(iss, "reader")
			readerJWT := idpKey.token(t, good)

			// A valid token: the agent's grants.
			s := rawConnect(t, endpoint, readerJWT)
			names, _ := s.rawTools()
			if strings.Join(names, ",") != "greet,ping" && strings.Join(names, ",") != "ping,greet" {
				t.Fatalf("reader with a JWT lists %v", names)
			}
			if text, isErr := s.callText("greet", map[string]any{"name": "ada"}); isErr || text != "hello ada" {
				t.Fatalf("greet: %q %v", text, isErr)
			}
			ci := rawConnect(t, endpoint, idpKey.token(t, jwtClaims(iss, "ci")))
			if names, _ := ci.rawTools(); strings.Join(names, ",") != "ping" {
				t.Fatalf("ci with a JWT lists %v, want only its grant", names)
			}
			static := rawConnect(t, endpoint, "static-reader-token")
			if names, _ := static.rawTools(); len(names) != 2 {
				t.Fatalf("the static token beside JWTs lists %v", names)
			}

			// Each refusal: 401, the resource metadata pointer, one body.
			hdr, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
			pl, _ := json.Marshal(good)
			algNone := base64.RawURLEncoding.EncodeToString(hdr) + "." + base64.RawURLEncoding.EncodeToString(pl) + "."
			refused := []struct{ name, token, reason string }{
				{"wrong audience", idpKey.token(t, withClaim(good, "aud", "https://elsewhere.test")), "audience"},
				{"wrong issuer", idpKey.token(t, withClaim(good, "iss", "https://evil.test")), "issuer"},
				{"expired", idpKey.token(t, withClaim(good, "exp", time.Now().Add(-time.Hour).Unix())), "expired"},
				{"alg none", algNone, "algorithm"},
				{"unknown kid", stranger.token(t, good), "unknown_key"},
				{"undeclared agent", idpKey.token(t, jwtClaims(iss, "mallory")), "unknown_agent"},
			}
			const pointer = `Bearer resource_metadata="https://toolgate.test/.well-known/oauth-protected-resource/mcp/down"`
			bodies := map[string]bool{}
			for _, r := range refused {
				code, challenge, body := postMCP(t, endpoint, r.token, initBody)
				if code != http.StatusUnauthorized || !strings.HasPrefix(challenge, pointer) || !strings.Contains(challenge, `error="invalid_token"`) {
					t.Errorf("%s: HTTP %d, WWW-Authenticate %q", r.name, code, challenge)
				}
				bodies[body] = true
			}
			if len(bodies) != 1 {
				t.Errorf("refusal bodies differ (the reason belongs in the log only): %v", bodies)
			}
			waitFor(t, 10*time.Second, "the refusals' reasons in the log", func() bool {
				log := d.logText()
				for _, r := range refused {
					if !strings.Contains(log, `"reason":"`+r.reason+`"`) {
						return false
					}
				}
				return true
			})
			if code, challenge, _ := postMCP(t, endpoint, "", initBody); code != 401 || !strings.HasPrefix(challenge, pointer) || strings.Contains(challenge, "error=") {
				t.Errorf("no token: HTTP %d, WWW-Authenticate %q", code, challenge)
			}

			// The metadata document, without a token.
			resp, err := http.Get(d.base + "/.well-known/oauth-protected-resource/mcp/down")
			if err != nil {
				t.Fatal(err)
			}
			var meta struct {
				Resource             string   `json:"resource"`
				AuthorizationServers []string `json:"authorization_servers"`
				BearerMethods        []string `json:"bearer_methods_supported"`
			}
			err = json.NewDecoder(resp.Body).Decode(&meta)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 || meta.Resource != "https://toolgate.test/mcp/down" || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss {
				t.Errorf("metadata: HTTP %d %+v %v", resp.StatusCode, meta, err)
			}

			// A rotated key is picked up (the file is followed; a URL is
			// re-fetched on an unknown kid at most every 30s, which the
			// identity package's tests cover with a clock of their own).
			if keys == "file" {
				replaceFile(t, jwksPath, jwksDoc(t, rotated))
				next := rotated.token(t, good)
				waitFor(t, 10*time.Second, "the rotated key", func() bool {
					code, _, _ := postMCP(t, endpoint, next, initBody)
					return code == 200
				})
				if code, _, _ := postMCP(t, endpoint, idpKey.token(t, good), initBody); code != 401 {
					t.Errorf("the retired key still verifies: HTTP %d", code)
				}
			}

			// What reached the downstream: the workspace's header, never
			// the agent's token.
			all := down.all()
			if len(all) == 0 {
				t.Fatal("the downstream saw nothing")
			}
			for _, r := range all {
				if a := r.header.Get("Authorization"); a != "" {
					t.Errorf("the downstream got Authorization %q", a)
				}
				if r.header.Get("X-Downstream-Key") != "down-secret" {
					t.Errorf("the downstream did not get the workspace's header: %v", r.header)
				}
				for _, v := range r.header {
					for _, vv := range v {
						if strings.Contains(vv, readerJWT) || strings.Contains(vv, "static-reader-token") {
							t.Errorf("an agent token reached the downstream in a header: %q", vv)
						}
					}
				}
				if strings.Contains(string(r.body), readerJWT) || strings.Contains(string(r.body), "static-reader-token") {
					t.Errorf("an agent token reached the downstream in a body: %s", r.body)
				}
			}
		})
	}
}
