package identity

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// errNotModified tells the cache a source has nothing new (a jwks_file
// whose stat is unchanged).
var errNotModified = errors.New("not modified")

// keySource yields a JWKS document. Trust boundary: what it returns is
// untrusted until parseJWKS has kept only usable public keys.
type keySource interface {
	fetch(ctx context.Context) ([]byte, error)
	String() string
}

// urlSource fetches the JWKS over HTTP, bounded in time and size.
type urlSource struct {
	url     string
	client  *http.Client
	timeout time.Duration
}

func (s *urlSource) String() string { return s.url }

func (s *urlSource) fetch(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", jwksAcceptContentTypes)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("GET %s: HTTP %d", s.url, resp.StatusCode)
	}
	return readBounded(resp.Body, s.url)
}

// fileSource reads the JWKS from disk, again only when the file changed.
type fileSource struct {
	path string
	last os.FileInfo // guarded by keyCache's refresh being single-flight
}

func (s *fileSource) String() string { return s.path }

func (s *fileSource) fetch(context.Context) ([]byte, error) {
	fi, err := os.Stat(s.path)
	if err != nil {
		return nil, err
	}
	if s.last != nil && os.SameFile(s.last, fi) && fi.ModTime().Equal(s.last.ModTime()) && fi.Size() == s.last.Size() {
		return nil, errNotModified
	}
	f, err := os.Open(s.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readBounded(f, s.path)
	if err != nil {
		return nil, err
	}
	s.last = fi
	return b, nil
}

func readBounded(r io.Reader, from string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxJWKSBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", from, err)
	}
	if len(b) > MaxJWKSBytes {
		return nil, fmt.Errorf("%s: JWKS larger than %d bytes", from, MaxJWKSBytes)
	}
	return b, nil
}

// parseJWKS keeps the keys that can verify an allowed signature: public
// (private halves are dropped), asymmetric, meant for signing, RSA of at
// least 2048 bits. One bad key does not spoil the set; a set with no usable
// key at all is an error.
func parseJWKS(b []byte, log *slog.Logger, from string) ([]jose.JSONWebKey, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: not a JWKS document: %w", from, err)
	}
	var keys []jose.JSONWebKey
	for i, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			log.Warn("jwks: key skipped", "from", from, "index", i, "err", err)
			continue
		}
		if why := unusable(&k); why != "" {
			log.Warn("jwks: key skipped", "from", from, "index", i, "kid", k.KeyID, "why", why)
			continue
		}
		keys = append(keys, k.Public())
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no usable signing key among %d (asymmetric public keys only; RSA ≥ %d bits)", from, len(doc.Keys), minRSABits)
	}
	return keys, nil
}

func unusable(k *jose.JSONWebKey) string {
	if k.Use != "" && k.Use != "sig" {
		return "use is " + k.Use
	}
	pub := k.Public()
	switch key := pub.Key.(type) {
	case *rsa.PublicKey:
		if key.N.BitLen() < minRSABits {
			return fmt.Sprintf("RSA key of %d bits", key.N.BitLen())
		}
	case *ecdsa.PublicKey, ed25519.PublicKey:
	default:
		return fmt.Sprintf("key type %T is not an asymmetric signing key", k.Key)
	}
	return ""
}

// fits says whether key can have made a signature with alg, so an RSA key
// is never tried for ES256 nor a key pinned to one alg used for another.
func fits(alg jose.SignatureAlgorithm, k *jose.JSONWebKey) bool {
	if k.Algorithm != "" && k.Algorithm != string(alg) {
		return false
	}
	switch k.Key.(type) {
	case *rsa.PublicKey:
		return strings.HasPrefix(string(alg), "RS") || strings.HasPrefix(string(alg), "PS")
	case *ecdsa.PublicKey:
		return strings.HasPrefix(string(alg), "ES")
	case ed25519.PublicKey:
		return alg == jose.EdDSA
	}
	return false
}

// keyCache holds the current keys and refreshes them single-flight and
// rate-limited: a flood of tokens with invented kids costs one fetch per
// minRefresh, not one per token.
type keyCache struct {
	src        keySource
	now        func() time.Time
	minRefresh time.Duration
	maxAge     time.Duration
	log        *slog.Logger

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	checkedAt time.Time     // last successful fetch (or unchanged file)
	attemptAt time.Time     // last fetch attempt
	lastErr   error         // of the last attempt
	inflight  chan struct{} // closed when the running refresh ends
	fetches   int           // attempts, for tests and status
}

// current returns the keys, refreshing first when they are older than
// maxAge (rate-limited like any refresh; old keys stay if it fails).
func (c *keyCache) current(ctx context.Context) []jose.JSONWebKey {
	c.mu.Lock()
	stale := c.checkedAt.IsZero() || c.now().Sub(c.checkedAt) >= c.maxAge
	keys := c.keys
	c.mu.Unlock()
	if stale {
		keys, _ = c.refresh(ctx)
	}
	return keys
}

// refresh fetches the keys unless a fetch happened less than minRefresh
// ago; a caller arriving during a fetch waits for it. It returns the keys
// in force afterwards and the error of the last attempt.
func (c *keyCache) refresh(ctx context.Context) ([]jose.JSONWebKey, error) {
	c.mu.Lock()
	if ch := c.inflight; ch != nil {
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return c.snapshot()
		}
		return c.snapshot()
	}
	if !c.attemptAt.IsZero() && c.now().Sub(c.attemptAt) < c.minRefresh {
		keys, err := c.keys, c.lastErr
		c.mu.Unlock()
		return keys, err
	}
	ch := make(chan struct{})
	c.inflight = ch
	c.attemptAt = c.now()
	c.fetches++
	c.mu.Unlock()

	// The fetch is not cut short by one caller's cancellation: others wait on it.
	keys, err := c.load(context.WithoutCancel(ctx))

	c.mu.Lock()
	switch {
	case errors.Is(err, errNotModified):
		err = nil
		c.checkedAt = c.now()
	case err != nil:
		c.log.Warn("jwks: refresh failed; keeping the keys in force", "from", c.src.String(), "keys", len(c.keys), "err", err)
	default:
		c.keys = keys
		c.checkedAt = c.now()
	}
	c.lastErr = err
	c.inflight = nil
	close(ch)
	keys = c.keys
	c.mu.Unlock()
	return keys, err
}

func (c *keyCache) snapshot() ([]jose.JSONWebKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keys, c.lastErr
}

func (c *keyCache) load(ctx context.Context) ([]jose.JSONWebKey, error) {
	b, err := c.src.fetch(ctx)
	if err != nil {
		return nil, err
	}
	return parseJWKS(b, c.log, c.src.String())
}
