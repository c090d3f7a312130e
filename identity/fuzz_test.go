package identity

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzVerify feeds arbitrary bytes to the token parser entry: it must never
// panic, refusals must be *Error, and anything accepted names an agent.
func FuzzVerify(f *testing.F) {
	clk := newClock()
	k := newECKey(f, "k")
	path := filepath.Join(f.TempDir(), "jwks.json")
	writeFileAtomic(f, path, jwks(f, k))
	v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSFile: path, now: clk.now, MaxKeyAge: time.Hour})
	if err != nil {
		f.Fatal(err)
	}
	good := sign(f, k, claimsAt(clk.now(), "reader"))
	f.Add(good)
	f.Add(unsigned(map[string]any{"alg": "none"}, claimsAt(clk.now(), "reader"), ""))
	f.Add(unsigned(map[string]any{"alg": "ES256", "kid": "k", "crit": []string{"x"}}, claimsAt(clk.now(), "reader"), "AAAA"))
	f.Add("..")
	f.Add("a.b.c.d.e")
	f.Add("eyJhbGciOiJFUzI1NiJ9.e30.")
	f.Add(strings.Repeat(".", 1000))
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := v.Verify(context.Background(), raw)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error not *Error: %T %v", err, err)
			}
			return
		}
		if id.Agent == "" {
			t.Fatalf("accepted without an agent: %q", raw)
		}
	})
}
