package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestStateSigner: a sealed requestState opens to what was sealed, and any
// change to it — by a client or by a proxy on the way — is refused.
func TestStateSigner(t *testing.T) {
	t.Parallel()
	s, err := newStateSigner()
	if err != nil {
		t.Fatal(err)
	}
	other, err := newStateSigner()
	if err != nil {
		t.Fatal(err)
	}
	state := s.seal(map[string]any{"round": 1, "name": "Ada"})
	got, err := s.open(state)
	if err != nil || got["round"] != float64(1) || got["name"] != "Ada" {
		t.Fatalf("open = %v, %v", got, err)
	}
	if again := s.seal(map[string]any{"round": 1, "name": "Ada"}); again == state {
		t.Error("two seals of the same fields are equal: no nonce")
	}
	body, sig, _ := strings.Cut(state, ".")
	forged := base64.RawURLEncoding.EncodeToString([]byte(`{"round":2,"name":"Ada"}`))
	for name, bad := range map[string]string{
		"suffix":            state + "-TAMPERED",
		"body changed":      forged + "." + sig,
		"signature dropped": body,
		"empty":             "",
		"other key":         other.seal(map[string]any{"round": 1}),
		"not base64":        "!!!." + sig,
		"signature swapped": body + "." + strings.Split(s.seal(map[string]any{"x": 1}), ".")[1],
	} {
		if v, err := s.open(bad); err == nil {
			t.Errorf("%s: opened %v", name, v)
		}
	}
}
