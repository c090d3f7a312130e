package identity

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Defaults and bounds for Config. Each bound keeps one hostile or broken
// party (a token sender, a key server) from costing the gateway much.
const (
	DefaultAgentClaim      = "sub"
	DefaultClockSkew       = 60 * time.Second // as workspace.DefaultClockSkew
	MaxClockSkew           = 5 * time.Minute
	DefaultFetchTimeout    = 10 * time.Second
	DefaultMinRefresh      = 30 * time.Second // at most one JWKS fetch per this, however many unknown kids arrive
	DefaultMaxKeyAge       = time.Hour        // keys older than this are re-fetched on the next use
	DefaultFileCheck       = time.Second      // how often a jwks_file is stat'ed for changes
	MaxJWKSBytes           = 1 << 20          // a JWKS document larger than this is refused
	MaxTokenBytes          = 16 << 10         // a token larger than this is refused before parsing
	minRSABits             = 2048
	jwksAcceptContentTypes = "application/jwk-set+json, application/json"
)

// DefaultAlgorithms are the asymmetric signature algorithms accepted unless
// Config narrows them. Symmetric (HS*) and "none" are never accepted: with a
// public JWKS they would let anyone who read the keys forge tokens.
var defaultAlgorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// DefaultAlgorithms returns the default allowlist, as strings.
func DefaultAlgorithms() []string {
	out := make([]string, len(defaultAlgorithms))
	for i, a := range defaultAlgorithms {
		out[i] = string(a)
	}
	return out
}

// Config is what the gateway knows about its identity provider
// (gateway.identity.jwt in the workspace). Exactly one of JWKSURL and
// JWKSFile is set.
type Config struct {
	Issuer     string        // the exact iss every token must carry
	JWKSURL    string        // https (http only on a loopback host)
	JWKSFile   string        // a JWKS document on disk, re-read when it changes
	Audience   string        // the value aud must contain: this gateway's resource identifier (RFC 8707)
	AgentClaim string        // the claim naming the agent; default "sub"
	ClockSkew  time.Duration // leeway for exp/nbf/iat; default 60s, at most 5m
	Algorithms []string      // allowlist; default DefaultAlgorithms(); asymmetric only

	HTTPClient   *http.Client  // for JWKSURL; default a client with FetchTimeout
	FetchTimeout time.Duration // bound on one JWKS fetch; default 10s
	MinRefresh   time.Duration // least time between two JWKS fetches; default 30s
	MaxKeyAge    time.Duration // re-fetch keys older than this; default 1h
	Logger       *slog.Logger  // key refresh failures; default discards

	now func() time.Time // tests move the clock
}

// withDefaults checks c and fills its defaults; errors say how to fix.
func (c Config) withDefaults() (Config, []jose.SignatureAlgorithm, error) {
	var errs []string
	if c.Issuer == "" {
		errs = append(errs, "issuer is required (the exact iss of the tokens)")
	}
	if c.Audience == "" {
		errs = append(errs, "audience is required (this gateway's resource URL, as the identity provider puts it in aud)")
	}
	switch {
	case c.JWKSURL == "" && c.JWKSFile == "":
		errs = append(errs, "one of jwks_url or jwks_file is required")
	case c.JWKSURL != "" && c.JWKSFile != "":
		errs = append(errs, "give jwks_url or jwks_file, not both")
	case c.JWKSURL != "":
		if err := checkJWKSURL(c.JWKSURL); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if c.AgentClaim == "" {
		c.AgentClaim = DefaultAgentClaim
	}
	if c.ClockSkew == 0 {
		c.ClockSkew = DefaultClockSkew
	}
	if c.ClockSkew < 0 || c.ClockSkew > MaxClockSkew {
		errs = append(errs, fmt.Sprintf("clock_skew %s: use 0 to %s", c.ClockSkew, MaxClockSkew))
	}
	algs, err := allowlist(c.Algorithms)
	if err != nil {
		errs = append(errs, err.Error())
	}
	if c.FetchTimeout <= 0 {
		c.FetchTimeout = DefaultFetchTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.FetchTimeout, CheckRedirect: checkRedirect}
	}
	if c.MinRefresh <= 0 {
		c.MinRefresh = DefaultMinRefresh
	}
	if c.MaxKeyAge <= 0 {
		c.MaxKeyAge = DefaultMaxKeyAge
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if len(errs) > 0 {
		return c, nil, fmt.Errorf("gateway.identity.jwt: %s", strings.Join(errs, "; "))
	}
	return c, algs, nil
}

func allowlist(names []string) ([]jose.SignatureAlgorithm, error) {
	if len(names) == 0 {
		return slices.Clone(defaultAlgorithms), nil
	}
	out := make([]jose.SignatureAlgorithm, 0, len(names))
	for _, n := range names {
		a := jose.SignatureAlgorithm(n)
		if !slices.Contains(defaultAlgorithms, a) {
			return nil, fmt.Errorf("algorithm %q is not allowed: use asymmetric ones only (%s)", n, strings.Join(DefaultAlgorithms(), ", "))
		}
		out = append(out, a)
	}
	return out, nil
}

// checkRedirect holds a redirect of the JWKS fetch to the rules of
// jwks_url itself, so an https URL cannot be redirected to plain http.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return fmt.Errorf("more than 5 redirects")
	}
	return checkJWKSURL(req.URL.String())
}

// checkJWKSURL refuses key URLs an attacker on the path could answer: keys
// come over https, or plain http only from this machine.
func checkJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("jwks_url %q: %v", raw, err)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
			return nil
		}
		return fmt.Errorf("jwks_url %q: use https (plain http only for a loopback host)", raw)
	}
	return fmt.Errorf("jwks_url %q: not an http(s) URL", raw)
}
