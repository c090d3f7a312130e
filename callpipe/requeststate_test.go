package callpipe

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSealer: a requestState opens only as it was sealed, under the same
// key, before it expires.
func TestSealer(t *testing.T) {
	t.Parallel()
	if _, err := NewSealer(make([]byte, 16)); err == nil || !strings.Contains(err.Error(), "must be 32 bytes") {
		t.Errorf("short key: %v", err)
	}
	key := make([]byte, 32)
	key[0] = 1
	s, err := NewSealer(key)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claims := StateClaims{Agent: "bot", Action: "mcp:call:s:t", ArgsSHA256: "d", Revision: "r", ApprovalID: "a1", Expires: now.Add(time.Minute).Unix()}
	state, err := s.Seal(claims)
	if err != nil || !IsOwnState(state) || IsOwnState("server-state") {
		t.Fatalf("%q %v", state, err)
	}
	again, _ := s.Seal(claims)
	if again == state {
		t.Error("two seals of the same claims are equal (nonce reused)")
	}
	got, err := s.Open(state, now)
	if err != nil || got != claims {
		t.Fatalf("open: %+v %v", got, err)
	}
	if _, err := s.Open(state, now.Add(2*time.Minute)); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired: %v", err)
	}
	other, _ := NewSealer(make([]byte, 32))
	raw, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(state, statePrefix))
	raw[len(raw)-1] ^= 1
	cases := map[string]string{
		"other key": state,
		"altered":   statePrefix + base64.RawURLEncoding.EncodeToString(raw),
		"short":     statePrefix + "AAAA",
		"not b64":   statePrefix + "!!!",
	}
	// The same bytes spelled with the last character's unused low bits set
	// (a lenient decoder would open it): refused, so a state has one
	// spelling. Seal until the encoding has unused bits (length not a
	// multiple of 3).
	for claims.Agent = "bot"; ; claims.Agent += "x" {
		st, _ := s.Seal(claims)
		b := strings.TrimPrefix(st, statePrefix)
		if len(b)%4 == 0 {
			continue
		}
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		last := strings.IndexByte(alphabet, b[len(b)-1])
		cases["non-canonical"] = st[:len(st)-1] + string(alphabet[last|1])
		break
	}
	for name, bad := range cases {
		sealer := s
		if name == "other key" {
			sealer = other
		}
		if _, err := sealer.Open(bad, now); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
