package identity

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// TestVerify runs every token case against a JWKS served on loopback and
// the same JWKS read from a file.
func TestVerify(t *testing.T) {
	t.Parallel()
	rs := newRSAKey(t, "rs1", jose.RS256)
	ps := newRSAKey(t, "ps1", jose.PS256)
	es := newECKey(t, "es1")
	ed := newEdKey(t, "ed1")
	outsider := newRSAKey(t, "rs1", jose.RS256) // same kid, not published: a forgery
	doc := jwks(t, rs, ps, es, ed)
	clk := newClock()
	now := clk.now()

	edit := func(f func(map[string]any)) map[string]any {
		c := claimsAt(now, "reader")
		f(c)
		return c
	}
	hmacWithPublicKey := func() string {
		// Algorithm confusion: HS256 keyed with the RSA public key, which
		// anyone can read from the JWKS.
		der, err := x509.MarshalPKIXPublicKey(rs.priv.Public())
		if err != nil {
			t.Fatal(err)
		}
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: der, KeyID: "rs1"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := jwt.Signed(s).Claims(claimsAt(now, "reader")).Serialize()
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}

	cases := []struct {
		name      string
		token     string
		resources []string
		reason    Reason // "" = accepted
		detail    string // substring of the error
		agent     string
	}{
		{name: "valid RS256", token: sign(t, rs, claimsAt(now, "reader")), agent: "reader"},
		{name: "valid PS256", token: sign(t, ps, claimsAt(now, "reader")), agent: "reader"},
		{name: "valid ES256", token: sign(t, es, claimsAt(now, "editor")), agent: "editor"},
		{name: "valid EdDSA", token: sign(t, ed, claimsAt(now, "reader")), agent: "reader"},
		{name: "aud array containing ours", token: sign(t, rs, edit(func(c map[string]any) { c["aud"] = []string{"https://other", testAudience} })), agent: "reader"},
		{name: "aud is the surface resource", token: sign(t, rs, edit(func(c map[string]any) { c["aud"] = "https://gateway.test/mcp/notes" })), resources: []string{"https://gateway.test/mcp/notes"}, agent: "reader"},
		{name: "expired within skew", token: sign(t, rs, edit(func(c map[string]any) { c["exp"] = now.Add(-10 * time.Second).Unix() })), agent: "reader"},
		{name: "wrong audience", token: sign(t, rs, edit(func(c map[string]any) { c["aud"] = "https://other.test" })), reason: ReasonAudience, detail: `"https://other.test"`},
		{name: "no audience", token: sign(t, rs, edit(func(c map[string]any) { delete(c, "aud") })), reason: ReasonAudience},
		{name: "audience only a prefix", token: sign(t, rs, edit(func(c map[string]any) { c["aud"] = testAudience + "/x" })), reason: ReasonAudience},
		{name: "wrong issuer", token: sign(t, rs, edit(func(c map[string]any) { c["iss"] = "https://idp.test/" })), reason: ReasonIssuer, detail: `want "https://idp.test"`},
		{name: "expired", token: sign(t, rs, edit(func(c map[string]any) { c["exp"] = now.Add(-2 * time.Minute).Unix() })), reason: ReasonExpired, detail: "expired at"},
		{name: "no exp", token: sign(t, rs, edit(func(c map[string]any) { delete(c, "exp") })), reason: ReasonExpired, detail: "no exp"},
		{name: "not yet valid", token: sign(t, rs, edit(func(c map[string]any) { c["nbf"] = now.Add(2 * time.Minute).Unix() })), reason: ReasonNotYetValid, detail: "not valid before"},
		{name: "issued in the future", token: sign(t, rs, edit(func(c map[string]any) { c["iat"] = now.Add(2 * time.Minute).Unix() })), reason: ReasonNotYetValid, detail: "issued at"},
		{name: "alg none", token: unsigned(map[string]any{"alg": "none", "kid": "rs1"}, claimsAt(now, "reader"), ""), reason: ReasonAlgorithm, detail: `alg "none"`},
		{name: "alg None", token: unsigned(map[string]any{"alg": "None"}, claimsAt(now, "reader"), ""), reason: ReasonAlgorithm},
		{name: "no alg", token: unsigned(map[string]any{"kid": "rs1"}, claimsAt(now, "reader"), "AAAA"), reason: ReasonAlgorithm},
		{name: "HS256 keyed with the public key", token: hmacWithPublicKey(), reason: ReasonAlgorithm, detail: `alg "HS256"`},
		{name: "RS256 header on an EC key's kid", token: func() string {
			tok := sign(t, rs, claimsAt(now, "reader"))
			parts := strings.Split(tok, ".")
			return unsigned(map[string]any{"alg": "RS256", "kid": "es1"}, claimsAt(now, "reader"), parts[2])
		}(), reason: ReasonUnknownKey, detail: `kid "es1"`},
		{name: "forged with an unpublished key under a known kid", token: sign(t, outsider, claimsAt(now, "reader")), reason: ReasonSignature},
		{name: "payload swapped after signing", token: func() string {
			tok := strings.Split(sign(t, rs, claimsAt(now, "reader")), ".")
			other := strings.Split(sign(t, rs, claimsAt(now, "admin")), ".")
			return tok[0] + "." + other[1] + "." + tok[2]
		}(), reason: ReasonSignature},
		{name: "unknown kid", token: sign(t, testKey{kid: "nope", alg: jose.RS256, priv: rs.priv}, claimsAt(now, "reader")), reason: ReasonUnknownKey, detail: `kid "nope"`},
		{name: "claim missing", token: sign(t, rs, edit(func(c map[string]any) { delete(c, "sub") })), reason: ReasonAgentClaim, detail: `"sub" is missing`},
		{name: "claim a number", token: sign(t, rs, edit(func(c map[string]any) { c["sub"] = 42 })), reason: ReasonAgentClaim, detail: "a number, not a string"},
		{name: "claim an array", token: sign(t, rs, edit(func(c map[string]any) { c["sub"] = []string{"reader"} })), reason: ReasonAgentClaim, detail: "an array"},
		{name: "claim null", token: sign(t, rs, edit(func(c map[string]any) { c["sub"] = nil })), reason: ReasonAgentClaim, detail: "null"},
		{name: "claim empty", token: sign(t, rs, edit(func(c map[string]any) { c["sub"] = "" })), reason: ReasonAgentClaim, detail: "empty"},
		{name: "garbage", token: "not a token", reason: ReasonMalformed},
		{name: "empty", token: "", reason: ReasonMalformed},
		{name: "bad base64 header", token: "%%%.e30.AAAA", reason: ReasonMalformed, detail: "base64url"},
		{name: "header not an object", token: "WzFd.e30.AAAA", reason: ReasonMalformed, detail: "JSON object"},
		{name: "alg twice in the header", token: dupHeader(`{"alg":"none","alg":"RS256","kid":"rs1"}`, sign(t, rs, claimsAt(now, "reader"))), reason: ReasonMalformed, detail: "duplicate"},
		{name: "alg and ALG in the header", token: dupHeader(`{"alg":"RS256","ALG":"none","kid":"rs1"}`, sign(t, rs, claimsAt(now, "reader"))), reason: ReasonMalformed, detail: "differ only in case"},
		{name: "sub twice in signed claims", token: signRaw(t, rs, `{"iss":"`+testIssuer+`","aud":"`+testAudience+`","exp":`+fmt.Sprint(now.Add(time.Minute).Unix())+`,"sub":"reader","sub":"admin"}`), reason: ReasonMalformed, detail: "duplicate"},
		{name: "iss beside ISS in signed claims", token: signRaw(t, rs, `{"iss":"`+testIssuer+`","ISS":"https://evil","aud":"`+testAudience+`","exp":`+fmt.Sprint(now.Add(time.Minute).Unix())+`,"sub":"reader"}`), reason: ReasonMalformed, detail: "differ only in case"},
		{name: "encrypted (JWE)", token: "a.b.c.d.e", reason: ReasonMalformed, detail: "JWE"},
		{name: "oversized", token: strings.Repeat("A", MaxTokenBytes+1), reason: ReasonMalformed, detail: "limit"},
		{name: "payload not JSON", token: func() string {
			s, _ := jose.NewSigner(jose.SigningKey{Algorithm: rs.alg, Key: jose.JSONWebKey{Key: rs.priv, KeyID: rs.kid}}, nil)
			obj, err := s.Sign([]byte("not json"))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := obj.CompactSerialize()
			return raw
		}(), reason: ReasonMalformed, detail: "not strict JSON"},
		{name: "iss of the wrong type", token: sign(t, rs, edit(func(c map[string]any) { c["iss"] = 7 })), reason: ReasonMalformed, detail: "wrong type"},
		{name: "exp a string", token: sign(t, rs, edit(func(c map[string]any) { c["exp"] = "tomorrow" })), reason: ReasonMalformed},
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "jwks.json")
	writeFileAtomic(t, file, doc)
	p := newIDP(t, doc)
	sources := map[string]Config{
		"url":  {JWKSURL: p.srv.URL + "/jwks"},
		"file": {JWKSFile: file},
	}
	for srcName, base := range sources {
		base.Issuer, base.Audience, base.now = testIssuer, testAudience, clk.now
		v, err := NewVerifier(base)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range cases {
			t.Run(srcName+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				id, err := v.Verify(context.Background(), tc.token, tc.resources...)
				if tc.reason == "" {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					if id.Agent != tc.agent || id.Issuer != testIssuer || id.Expiry.IsZero() {
						t.Fatalf("identity %+v", id)
					}
					return
				}
				if err == nil {
					t.Fatalf("accepted (%+v), want %s", id, tc.reason)
				}
				if got := ReasonOf(err); got != tc.reason {
					t.Fatalf("reason %q, want %q: %v", got, tc.reason, err)
				}
				if !strings.Contains(err.Error(), tc.detail) {
					t.Fatalf("error %q lacks %q", err, tc.detail)
				}
				if len(tc.token) > 20 && strings.Contains(err.Error(), tc.token) {
					t.Fatalf("error carries the token")
				}
			})
		}
	}
}

// TestIdentityFields checks what a good token yields beyond the agent.
func TestIdentityFields(t *testing.T) {
	t.Parallel()
	clk := newClock()
	es := newECKey(t, "k")
	p := newIDP(t, jwks(t, es))
	v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSURL: p.srv.URL, AgentClaim: "azp", now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	c := claimsAt(clk.now(), "user-7")
	c["azp"], c["jti"] = "reader", "t1"
	id, err := v.Verify(context.Background(), sign(t, es, c))
	if err != nil {
		t.Fatal(err)
	}
	if id.Agent != "reader" || id.Subject != "user-7" || id.KeyID != "k" || id.TokenID != "t1" ||
		strings.Join(id.Scopes, ",") != "repo:read,workspace:read" || strings.Join(id.Audience, ",") != testAudience {
		t.Fatalf("identity %+v", id)
	}
	if v.AgentClaim() != "azp" {
		t.Fatalf("AgentClaim %q", v.AgentClaim())
	}
}

// TestNarrowedAlgorithms checks a narrowed allowlist refuses the others.
func TestNarrowedAlgorithms(t *testing.T) {
	t.Parallel()
	clk := newClock()
	rs, es := newRSAKey(t, "rs", jose.RS256), newECKey(t, "es")
	p := newIDP(t, jwks(t, rs, es))
	v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSURL: p.srv.URL, Algorithms: []string{"ES256"}, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, es, claimsAt(clk.now(), "a"))); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), sign(t, rs, claimsAt(clk.now(), "a"))); ReasonOf(err) != ReasonAlgorithm {
		t.Fatalf("RS256 with ES256 only: %v", err)
	}
}

// TestConfigErrors checks each misconfiguration is refused with its fix.
func TestConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no issuer", Config{Audience: "a", JWKSURL: "https://idp/jwks"}, "issuer is required"},
		{"no audience", Config{Issuer: "i", JWKSURL: "https://idp/jwks"}, "audience is required"},
		{"no keys", Config{Issuer: "i", Audience: "a"}, "one of jwks_url or jwks_file"},
		{"both keys", Config{Issuer: "i", Audience: "a", JWKSURL: "https://idp/jwks", JWKSFile: "/x"}, "not both"},
		{"plain http remote", Config{Issuer: "i", Audience: "a", JWKSURL: "http://idp.example/jwks"}, "use https"},
		{"not http", Config{Issuer: "i", Audience: "a", JWKSURL: "file:///etc/jwks"}, "not an http(s) URL"},
		{"skew too large", Config{Issuer: "i", Audience: "a", JWKSURL: "https://idp/jwks", ClockSkew: 10 * time.Minute}, "clock_skew 10m0s"},
		{"negative skew", Config{Issuer: "i", Audience: "a", JWKSURL: "https://idp/jwks", ClockSkew: -time.Second}, "clock_skew"},
		{"symmetric alg", Config{Issuer: "i", Audience: "a", JWKSURL: "https://idp/jwks", Algorithms: []string{"RS256", "HS256"}}, `"HS256" is not allowed`},
		{"none alg", Config{Issuer: "i", Audience: "a", JWKSURL: "https://idp/jwks", Algorithms: []string{"none"}}, `"none" is not allowed`},
		{"missing file", Config{Issuer: "i", Audience: "a", JWKSFile: "/nonexistent/jwks.json"}, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewVerifier(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := NewVerifier(Config{Issuer: "i", Audience: "a", JWKSURL: "http://127.0.0.1:1/jwks"}); err != nil {
		t.Fatalf("loopback http refused: %v", err)
	}
}

// dupHeader replaces tok's protected header with header (the signature no
// longer matches; the header must be refused before that matters).
func dupHeader(header, tok string) string {
	parts := strings.Split(tok, ".")
	return base64.RawURLEncoding.EncodeToString([]byte(header)) + "." + parts[1] + "." + parts[2]
}

// signRaw signs payload bytes as they are (to send claims a map cannot hold).
func signRaw(t *testing.T, k testKey, payload string) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: k.alg, Key: jose.JSONWebKey{Key: k.priv, KeyID: k.kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := s.Sign([]byte(payload))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := obj.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
