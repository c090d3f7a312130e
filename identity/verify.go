// Package identity says which agent an HTTP request comes from: by its
// static bearer token (Tokens) or by an OAuth 2.1 / OIDC access token (a
// JWT, checked by Verifier against the identity provider's keys), and
// answers a request it cannot attribute with the 401 challenge that tells
// a client where to get a token (RFC 6750, and the RFC 9728
// protected-resource metadata Resource serves). Signatures and claims are
// checked by go-jose; this package chooses the keys and the rules.
package identity

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/toolgate/toolgate/strictjson"
)

// Identity is what a verified token says about its bearer.
type Identity struct {
	Agent    string    // the agent_claim value; the caller checks it is declared
	Subject  string    // sub
	Issuer   string    // iss
	Audience []string  // aud
	Expiry   time.Time // exp
	Scopes   []string  // scope (space-separated) or scp, if present
	KeyID    string    // the kid that verified it
	TokenID  string    // jti, if present
}

// Verifier checks bearer JWTs against one issuer's keys. It is safe for
// concurrent use; one lives as long as the workspace revision that built it.
type Verifier struct {
	cfg   Config
	algs  []jose.SignatureAlgorithm
	cache *keyCache
}

// NewVerifier checks cfg and prepares the key cache. A jwks_file is read
// now (a missing or unusable file is an error: fail closed at start); a
// jwks_url is fetched on first use or by Warm.
func NewVerifier(cfg Config) (*Verifier, error) {
	cfg, algs, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &keyCache{now: cfg.now, log: cfg.Logger}
	if cfg.JWKSFile != "" {
		c.src = &fileSource{path: cfg.JWKSFile}
		c.minRefresh, c.maxAge = 0, DefaultFileCheck
	} else {
		c.src = &urlSource{url: cfg.JWKSURL, client: cfg.HTTPClient, timeout: cfg.FetchTimeout}
		c.minRefresh, c.maxAge = cfg.MinRefresh, cfg.MaxKeyAge
	}
	v := &Verifier{cfg: cfg, algs: algs, cache: c}
	if cfg.JWKSFile != "" {
		if _, err := c.refresh(context.Background()); err != nil {
			return nil, fmt.Errorf("gateway.identity.jwt.jwks_file: %w", err)
		}
	}
	return v, nil
}

// Warm fetches the keys now, so a misconfigured jwks_url shows at start
// rather than at the first call. The gateway may log the error and go on:
// later calls retry.
func (v *Verifier) Warm(ctx context.Context) error {
	_, err := v.cache.refresh(ctx)
	return err
}

// AgentClaim is the claim the agent id is read from.
func (v *Verifier) AgentClaim() string { return v.cfg.AgentClaim }

// registered are the RFC 7519 claims checked here; sub is read apart, as
// it may be the agent claim and its type is reported as such.
type registered struct {
	Issuer    string           `json:"iss"`
	Audience  jwt.Audience     `json:"aud"`
	Expiry    *jwt.NumericDate `json:"exp"`
	NotBefore *jwt.NumericDate `json:"nbf"`
	IssuedAt  *jwt.NumericDate `json:"iat"`
	ID        string           `json:"jti"`
}

// header is the part of the JOSE header read before go-jose parses the
// token: alg (checked against the allowlist here, and again by go-jose)
// and kid (to choose the key).
type header struct {
	Alg string
	Kid string
}

// Verify checks raw (the bearer token, without "Bearer ") and returns who it
// names. aud must contain the configured audience or one of resources (for
// instance the surface URL the client asked a token for). Errors are
// *Error, for the operator's log; the HTTP answer should stay generic.
func (v *Verifier) Verify(ctx context.Context, raw string, resources ...string) (Identity, error) {
	hdr, err := peekHeader(raw)
	if err != nil {
		return Identity{}, err
	}
	alg := jose.SignatureAlgorithm(hdr.Alg)
	if !slices.Contains(v.algs, alg) {
		return Identity{}, fail(ReasonAlgorithm, nil, "alg %q is not allowed (allowed: %s)", hdr.Alg, joinAlgs(v.algs))
	}
	jws, err := jose.ParseSignedCompact(raw, v.algs)
	if err != nil {
		return Identity{}, fail(ReasonMalformed, err, "not a signed JWT")
	}
	if len(jws.Signatures) != 1 {
		return Identity{}, fail(ReasonMalformed, nil, "%d signatures; want exactly one", len(jws.Signatures))
	}
	payload, kid, err := v.verifySignature(ctx, jws, alg, hdr.Kid)
	if err != nil {
		return Identity{}, err
	}
	// Only verified bytes are decoded from here on, and strictly: with
	// "sub" twice, or "iss" beside "ISS" (which encoding/json would bind to
	// one field), two readers could see two identities.
	if err := strictjson.Valid(payload); err != nil {
		return Identity{}, fail(ReasonMalformed, err, "claims are not strict JSON")
	}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal(payload, &extra); err != nil || extra == nil {
		return Identity{}, fail(ReasonMalformed, err, "claims are not a JSON object")
	}
	var reg registered
	if err := json.Unmarshal(payload, &reg); err != nil {
		return Identity{}, fail(ReasonMalformed, err, "registered claims (iss, aud, exp, nbf, iat, jti) of the wrong type")
	}
	claims := jwt.Claims{Issuer: reg.Issuer, Audience: reg.Audience, Expiry: reg.Expiry, NotBefore: reg.NotBefore, IssuedAt: reg.IssuedAt, ID: reg.ID}
	if err := v.checkClaims(&claims, resources); err != nil {
		return Identity{}, err
	}
	agent, err := stringClaim(extra, v.cfg.AgentClaim)
	if err != nil {
		return Identity{}, err
	}
	sub, _ := stringClaim(extra, "sub")
	return Identity{
		Agent:    agent,
		Subject:  sub,
		Issuer:   claims.Issuer,
		Audience: []string(claims.Audience),
		Expiry:   claims.Expiry.Time(),
		Scopes:   scopes(extra),
		KeyID:    kid,
		TokenID:  claims.ID,
	}, nil
}

// peekHeader bounds and splits the token and decodes its protected header.
// This is no signature check: it only lets a refusal name the alg.
func peekHeader(raw string) (header, error) {
	var h header
	if len(raw) > MaxTokenBytes {
		return h, fail(ReasonMalformed, nil, "token is %d bytes, over the %d-byte limit", len(raw), MaxTokenBytes)
	}
	parts := strings.Split(raw, ".")
	switch len(parts) {
	case 3:
	case 5:
		return h, fail(ReasonMalformed, nil, "an encrypted token (JWE); only signed tokens (JWS) are accepted")
	default:
		return h, fail(ReasonMalformed, nil, "%d dot-separated parts; a JWS has 3", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return h, fail(ReasonMalformed, err, "header is not base64url")
	}
	// Strictly: a header with "alg" twice (or "alg" and "ALG") could be read
	// one way here and another by go-jose.
	obj, err := strictjson.ParseObject(b)
	if err != nil {
		return h, fail(ReasonMalformed, err, "header is not a strict JSON object")
	}
	h.Alg, _ = obj["alg"].(string)
	h.Kid, _ = obj["kid"].(string)
	return h, nil
}

// verifySignature finds the key for kid (refreshing the JWKS once, rate
// limited, when kid is unknown), has go-jose verify the signature with it,
// and returns the verified payload.
func (v *Verifier) verifySignature(ctx context.Context, jws *jose.JSONWebSignature, alg jose.SignatureAlgorithm, kid string) ([]byte, string, error) {
	keys := v.cache.current(ctx)
	cands := candidates(keys, alg, kid)
	if len(cands) == 0 {
		var err error
		keys, err = v.cache.refresh(ctx)
		if len(keys) == 0 {
			return nil, "", fail(ReasonKeys, err, "no keys from %s", v.cache.src)
		}
		cands = candidates(keys, alg, kid)
	}
	if len(cands) == 0 {
		if kid == "" {
			return nil, "", fail(ReasonUnknownKey, nil, "no %s key in the JWKS from %s (token has no kid)", alg, v.cache.src)
		}
		return nil, "", fail(ReasonUnknownKey, nil, "no %s key with kid %q in the JWKS from %s", alg, kid, v.cache.src)
	}
	var last error
	for _, k := range cands {
		payload, err := jws.Verify(k.Key)
		if err != nil {
			last = err
			continue
		}
		return payload, k.KeyID, nil
	}
	return nil, "", fail(ReasonSignature, last, "signature (alg %s, kid %q) does not verify with the %d matching key(s)", alg, kid, len(cands))
}

func candidates(keys []jose.JSONWebKey, alg jose.SignatureAlgorithm, kid string) []*jose.JSONWebKey {
	var out []*jose.JSONWebKey
	for i := range keys {
		k := &keys[i]
		if (kid == "" || k.KeyID == kid) && fits(alg, k) {
			out = append(out, k)
		}
	}
	return out
}

// checkClaims: iss exact, aud contains ours, exp present and not passed,
// nbf and iat not in the future, each within the clock skew.
func (v *Verifier) checkClaims(c *jwt.Claims, resources []string) error {
	if c.Expiry == nil {
		return fail(ReasonExpired, nil, "token has no exp; access tokens must expire")
	}
	want := append([]string{v.cfg.Audience}, resources...)
	now := v.cfg.now()
	err := c.ValidateWithLeeway(jwt.Expected{Issuer: v.cfg.Issuer, AnyAudience: want, Time: now}, v.cfg.ClockSkew)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return fail(ReasonIssuer, nil, "iss %q, want %q", c.Issuer, v.cfg.Issuer)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return fail(ReasonAudience, nil, "aud %q does not contain %q", []string(c.Audience), strings.Join(want, `" or "`))
	case errors.Is(err, jwt.ErrExpired):
		return fail(ReasonExpired, nil, "expired at %s, now %s (clock skew %s)", c.Expiry.Time().UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), v.cfg.ClockSkew)
	case errors.Is(err, jwt.ErrNotValidYet):
		return fail(ReasonNotYetValid, nil, "not valid before %s, now %s (clock skew %s)", c.NotBefore.Time().UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), v.cfg.ClockSkew)
	case errors.Is(err, jwt.ErrIssuedInTheFuture):
		return fail(ReasonNotYetValid, nil, "issued at %s, in the future (now %s, clock skew %s)", c.IssuedAt.Time().UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), v.cfg.ClockSkew)
	}
	return fail(ReasonMalformed, err, "claims")
}

func stringClaim(extra map[string]json.RawMessage, name string) (string, error) {
	raw, ok := extra[name]
	if !ok {
		return "", fail(ReasonAgentClaim, nil, "claim %q is missing", name)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || string(raw) == "null" {
		return "", fail(ReasonAgentClaim, nil, "claim %q is %s, not a string", name, jsonKind(raw))
	}
	if s == "" {
		return "", fail(ReasonAgentClaim, nil, "claim %q is empty", name)
	}
	return s, nil
}

func jsonKind(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	switch {
	case s == "null":
		return "null"
	case s == "true" || s == "false":
		return "a boolean"
	case strings.HasPrefix(s, "{"):
		return "an object"
	case strings.HasPrefix(s, "["):
		return "an array"
	}
	return "a number"
}

// scopes reads the OAuth scope claim (RFC 9068 "scope", space-separated)
// or the common "scp" (array or string).
func scopes(extra map[string]json.RawMessage) []string {
	for _, name := range []string{"scope", "scp"} {
		raw, ok := extra[name]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return strings.Fields(s)
		}
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			return list
		}
	}
	return nil
}

func joinAlgs(algs []jose.SignatureAlgorithm) string {
	s := make([]string, len(algs))
	for i, a := range algs {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}
