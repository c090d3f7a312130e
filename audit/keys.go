package audit

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// GenerateKeyPair makes an ed25519 key pair for signed checkpoints and
// returns it PEM-encoded: the private key as PKCS #8 ("PRIVATE KEY", what
// `openssl genpkey -algorithm ed25519` writes) and the public key as PKIX
// ("PUBLIC KEY", what `openssl pkey -pubout` writes).
func GenerateKeyPair() (privPEM, pubPEM []byte, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generate ed25519 key: %w", err)
	}
	p8, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	pk, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p8}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pk}), nil
}

// ParsePrivateKey reads a PEM PKCS #8 ed25519 private key.
func ParsePrivateKey(data []byte) (ed25519.PrivateKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PRIVATE KEY" {
		return nil, errors.New("not a PEM \"PRIVATE KEY\" block (make one with `toolgate audit keygen` or `openssl genpkey -algorithm ed25519`)")
	}
	k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse private key: %w", err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("the private key is %T, not ed25519", k)
	}
	return priv, nil
}

// ParsePublicKey reads a PEM PKIX ed25519 public key.
func ParsePublicKey(data []byte) (ed25519.PublicKey, error) {
	blk, _ := pem.Decode(data)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return nil, errors.New("not a PEM \"PUBLIC KEY\" block (`toolgate audit keygen` writes one; or `openssl pkey -in KEY -pubout`)")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parse public key: %w", err)
	}
	pub, ok := k.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("the public key is %T, not ed25519", k)
	}
	return pub, nil
}

// ParseSigningKey reads gateway.audit.signing_key's value: a PEM PKCS #8
// ed25519 private key, or the raw 32-byte seed or 64-byte private key.
func ParseSigningKey(data []byte) (ed25519.PrivateKey, error) {
	if blk, _ := pem.Decode(data); blk != nil {
		return ParsePrivateKey(data)
	}
	switch len(data) {
	case ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(data), nil
	case ed25519.PrivateKeySize:
		priv := ed25519.PrivateKey(append([]byte(nil), data...))
		if !bytes.Equal(ed25519.NewKeyFromSeed(priv.Seed()), priv) {
			return nil, errors.New("the 64-byte signing key is not a consistent ed25519 private key")
		}
		return priv, nil
	}
	return nil, fmt.Errorf("the signing key is %d bytes of no known form: give a PEM \"PRIVATE KEY\" (`toolgate audit keygen`) or a raw 32-byte seed", len(data))
}
