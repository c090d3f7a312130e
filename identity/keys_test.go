package identity

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

func urlVerifier(t *testing.T, url string, clk *clock, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{Issuer: testIssuer, Audience: testAudience, JWKSURL: url, now: clk.now}
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRotationOverURL: a token signed by a key published after the first
// fetch is accepted once the JWKS is re-fetched for its unknown kid, and a
// flood of invented kids costs at most one fetch per MinRefresh.
func TestRotationOverURL(t *testing.T) {
	t.Parallel()
	clk := newClock()
	old, next := newRSAKey(t, "2026-01", jose.RS256), newECKey(t, "2026-02")
	p := newIDP(t, jwks(t, old))
	v := urlVerifier(t, p.srv.URL, clk, nil)
	ctx := context.Background()

	if _, err := v.Verify(ctx, sign(t, old, claimsAt(clk.now(), "reader"))); err != nil {
		t.Fatal(err)
	}
	if n := p.hits.Load(); n != 1 {
		t.Fatalf("%d fetches after the first token, want 1", n)
	}
	// Cached: a second good token fetches nothing.
	if _, err := v.Verify(ctx, sign(t, old, claimsAt(clk.now(), "reader"))); err != nil || p.hits.Load() != 1 {
		t.Fatalf("err %v, %d fetches", err, p.hits.Load())
	}

	// The IdP rotates: the new key is published; its first token arrives
	// after MinRefresh.
	p.set(jwks(t, old, next))
	clk.advance(DefaultMinRefresh + time.Second)
	id, err := v.Verify(ctx, sign(t, next, claimsAt(clk.now(), "editor")))
	if err != nil {
		t.Fatalf("rotated key refused: %v", err)
	}
	if id.KeyID != "2026-02" || p.hits.Load() != 2 {
		t.Fatalf("kid %q, %d fetches", id.KeyID, p.hits.Load())
	}

	// A flood of bogus kids right after: refused, and no fetch at all.
	for i := range 200 {
		bogus := testKey{kid: fmt.Sprintf("bogus-%d", i), alg: jose.ES256, priv: next.priv}
		if _, err := v.Verify(ctx, sign(t, bogus, claimsAt(clk.now(), "reader"))); ReasonOf(err) != ReasonUnknownKey {
			t.Fatalf("bogus kid: %v", err)
		}
	}
	if n := p.hits.Load(); n != 2 {
		t.Fatalf("flood caused %d fetches", n-2)
	}
	// Once MinRefresh has passed, one more unknown kid may fetch again.
	clk.advance(DefaultMinRefresh)
	if _, err := v.Verify(ctx, sign(t, testKey{kid: "bogus-x", alg: jose.ES256, priv: next.priv}, claimsAt(clk.now(), "reader"))); ReasonOf(err) != ReasonUnknownKey {
		t.Fatal(err)
	}
	if n := p.hits.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3", n)
	}
	// A key removed from the JWKS stops working once the keys are re-read
	// (MaxKeyAge).
	p.set(jwks(t, next))
	clk.advance(DefaultMaxKeyAge)
	if _, err := v.Verify(ctx, sign(t, old, claimsAt(clk.now(), "reader"))); ReasonOf(err) != ReasonUnknownKey {
		t.Fatalf("revoked key: %v", err)
	}
}

// TestConcurrentUnknownKids: many goroutines with unknown kids at once
// share one fetch.
func TestConcurrentUnknownKids(t *testing.T) {
	t.Parallel()
	clk := newClock()
	k := newECKey(t, "k1")
	p := newIDP(t, jwks(t, k))
	v := urlVerifier(t, p.srv.URL, clk, nil)
	ctx := context.Background()
	if err := v.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	clk.advance(DefaultMinRefresh + time.Second)
	tokens := make([]string, 64)
	for i := range tokens {
		tokens[i] = sign(t, testKey{kid: fmt.Sprintf("x%d", i), alg: jose.ES256, priv: k.priv}, claimsAt(clk.now(), "a"))
	}
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Go(func() {
			if _, err := v.Verify(ctx, tok); ReasonOf(err) != ReasonUnknownKey {
				t.Errorf("got %v", err)
			}
		})
	}
	wg.Wait()
	if n := p.hits.Load(); n != 2 {
		t.Fatalf("%d fetches for 64 concurrent unknown kids after warm-up, want 2", n)
	}
}

// TestRotationInFile: a jwks_file replaced on disk is re-read when a token
// names a kid it did not have; a broken replacement keeps the old keys.
func TestRotationInFile(t *testing.T) {
	t.Parallel()
	clk := newClock()
	old, next := newEdKey(t, "a"), newECKey(t, "b")
	path := filepath.Join(t.TempDir(), "jwks.json")
	writeFileAtomic(t, path, jwks(t, old))
	v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSFile: path, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := v.Verify(ctx, sign(t, next, claimsAt(clk.now(), "r"))); ReasonOf(err) != ReasonUnknownKey {
		t.Fatalf("before rotation: %v", err)
	}
	writeFileAtomic(t, path, jwks(t, old, next))
	if _, err := v.Verify(ctx, sign(t, next, claimsAt(clk.now(), "r"))); err != nil {
		t.Fatalf("after rotation: %v", err)
	}
	// A broken file (a half-done edit) does not drop the keys in force.
	writeFileAtomic(t, path, []byte(`{"keys": [`))
	clk.advance(DefaultFileCheck)
	if _, err := v.Verify(ctx, sign(t, old, claimsAt(clk.now(), "r"))); err != nil {
		t.Fatalf("old keys lost on a broken file: %v", err)
	}
	// A file that drops a key revokes it on the next check.
	writeFileAtomic(t, path, jwks(t, next))
	clk.advance(DefaultFileCheck)
	if _, err := v.Verify(ctx, sign(t, old, claimsAt(clk.now(), "r"))); ReasonOf(err) != ReasonUnknownKey {
		t.Fatalf("removed key: %v", err)
	}
}

// TestHostileKeyServers: a key server that fails, answers too much, or
// never answers costs a bounded fetch and yields ReasonKeys.
func TestHostileKeyServers(t *testing.T) {
	t.Parallel()
	k := newECKey(t, "k")
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	cases := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"HTTP 500", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", 500) }, "HTTP 500"},
		{"not JSON", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("<html>")) }, "not a JWKS"},
		{"too large", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", MaxJWKSBytes) + `]}`))
		}, "larger than"},
		{"no usable key", func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"k"}]}`))
		}, "no usable signing key"},
		{"redirects to plain http off this machine", func(w http.ResponseWriter, r *http.Request) {
			// Refused by CheckRedirect before any request leaves: no traffic off loopback.
			http.Redirect(w, r, "http://keys.example.invalid/jwks", http.StatusFound)
		}, "use https"},
		{"never answers", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}, "deadline exceeded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tc.handler)
			t.Cleanup(srv.Close)
			clk := newClock()
			v := urlVerifier(t, srv.URL, clk, func(c *Config) { c.FetchTimeout = 300 * time.Millisecond })
			_, err := v.Verify(context.Background(), sign(t, k, claimsAt(clk.now(), "r")))
			if ReasonOf(err) != ReasonKeys || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %s with %q", err, ReasonKeys, tc.want)
			}
		})
	}
}

// TestUnusableKeysSkipped: a JWKS mixing a symmetric key, a short RSA key,
// an encryption key and a good one keeps only the good one, so an HS256
// token cannot find an "oct" key to be checked with.
func TestUnusableKeysSkipped(t *testing.T) {
	t.Parallel()
	good := newECKey(t, "good")
	short, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	shortJWK, _ := json.Marshal(jose.JSONWebKey{Key: short.Public(), KeyID: "short"})
	encJWK, _ := json.Marshal(jose.JSONWebKey{Key: good.priv.Public(), KeyID: "enc", Use: "enc"})
	goodJWK, _ := json.Marshal(good.public())
	doc := fmt.Sprintf(`{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"sym"},%s,%s,{"kty":"RSA","kid":"broken"},%s]}`, shortJWK, encJWK, goodJWK)
	keys, err := parseJWKS([]byte(doc), discardLogger(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || keys[0].KeyID != "good" {
		t.Fatalf("kept %d keys: %+v", len(keys), keys)
	}
	// A private key published by mistake is used by its public half only.
	privJWK, _ := json.Marshal(jose.JSONWebKey{Key: good.priv, KeyID: "priv"})
	keys, err = parseJWKS([]byte(`{"keys":[`+string(privJWK)+`]}`), discardLogger(), "test")
	if err != nil || len(keys) != 1 || !keys[0].IsPublic() {
		t.Fatalf("private key: %v %+v", err, keys)
	}
}

// TestJWKSFileTooLarge: a huge jwks_file is refused at start.
func TestJWKSFileTooLarge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, []byte(`{"keys":[`+strings.Repeat(" ", MaxJWKSBytes)+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewVerifier(Config{Issuer: "i", Audience: "a", JWKSFile: path})
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("got %v", err)
	}
}
