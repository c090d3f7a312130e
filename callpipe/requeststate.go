package callpipe

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// statePrefix marks a requestState toolgate issued; any other passes to
// the downstream server untouched (it is the server's).
const statePrefix = "tg1."

// StateClaims is what a requestState toolgate issues binds: one call of
// one agent under one workspace revision (content hash and generation),
// the approval it asks the user about, and until when.
type StateClaims struct {
	Agent      string `json:"a"`
	Action     string `json:"x"`
	ArgsSHA256 string `json:"d"`
	Revision   string `json:"r"`
	Generation int64  `json:"g"`
	ApprovalID string `json:"p"`
	Expires    int64  `json:"e"`
}

// Sealer seals and opens the requestState toolgate issues (AES-256-GCM,
// key shared by the deployment through the store): a client can carry it
// but neither read nor forge nor alter it.
type Sealer struct {
	aead cipher.AEAD
}

// NewSealer returns a sealer over a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("requestState key must be 32 bytes, not %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal returns the requestState for c.
func (s *Sealer) Seal(c StateClaims) (string, error) {
	plain, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := s.aead.Seal(nonce, nonce, plain, []byte(statePrefix))
	return statePrefix + base64.RawURLEncoding.EncodeToString(sealed), nil
}

// ErrBadState refuses a requestState that does not open: altered, forged,
// or sealed under another deployment's key.
var ErrBadState = errors.New("the requestState was not issued by this gateway or was altered")

// Open checks and returns the claims of a requestState toolgate issued.
func (s *Sealer) Open(state string, now time.Time) (StateClaims, error) {
	var c StateClaims
	// Strict: the unused low bits of the last character must be zero, so a
	// state has exactly one spelling and an altered character never
	// decodes to the bytes that were sealed.
	raw, err := base64.RawURLEncoding.Strict().DecodeString(strings.TrimPrefix(state, statePrefix))
	if err != nil || len(raw) < s.aead.NonceSize()+s.aead.Overhead() {
		return c, ErrBadState
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(statePrefix))
	if err != nil || json.Unmarshal(plain, &c) != nil {
		return c, ErrBadState
	}
	if now.Unix() > c.Expires {
		return c, errors.New("the requestState has expired; call again without it to ask anew")
	}
	return c, nil
}

// IsOwnState reports whether a requestState is toolgate's own (else it
// belongs to the downstream server and passes through untouched).
func IsOwnState(state string) bool { return strings.HasPrefix(state, statePrefix) }
