package workspace

import (
	"net"
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// gateway checks the gateway: block. root is the document, so that errors
// about one scalar point at that scalar rather than at its block.
func (v *validator) gateway(root *yaml.Node) {
	g := v.ws.Gateway
	if g.Listen != "" {
		if _, _, err := net.SplitHostPort(g.Listen); err != nil {
			v.errorf(g.Pos, "gateway.listen %q is not host:port; write it like 127.0.0.1:7330", g.Listen)
		}
	}
	for _, r := range g.Approvals.Rules {
		if r.Agent == "" || r.Capability == "" {
			v.errorf(r.Pos, "an approval rule needs agent and capability")
			r.Damaged = true
		}
	}
	// A declaration with no position was not a mapping: the decoder said
	// so, where it was written, and there is nothing of it to check.
	if pg := g.State.Postgres; pg != nil && pg.Pos.Line > 0 {
		if g.State.Path != "" {
			v.errorf(g.State.Pos, "gateway.state has both path (the embedded store) and postgres (a shared store); keep the one this deployment uses")
		}
		if pg.DSN == nil {
			v.errorf(pg.Pos, "gateway.state.postgres needs dsn: {env: VARIABLE} (or {file: /path/to/dsn}) holding the connection string")
		}
	}
	if j := g.Identity.JWT; j != nil && j.Pos.Line > 0 {
		v.jwt(j, func(key string) Pos { return valuePos(root, j.Pos, "gateway", "identity", "jwt", key) })
	}
	v.operators(g)
	if h := g.Approvals.Notify.Webhook; h != nil {
		v.webhook(h, func(key string) Pos { return valuePos(root, h.Pos, "gateway", "approvals", "notify", "webhook", key) })
	}
}

// operators checks gateway.operators: unique ids, and a way for each to
// sign in (its token, or a JWT when operator_claim is set).
func (v *validator) operators(g Gateway) {
	claim := ""
	if j := g.Identity.JWT; j != nil {
		claim = j.OperatorClaim
		if claim != "" && claim == j.AgentClaimOrDefault() {
			v.errorf(j.Pos, "gateway.identity.jwt.operator_claim %q is also the agent claim: every agent's token would then sign in as the operator of the same name; use a claim of its own (for example toolgate_operator)", claim)
		}
	}
	seen := map[string]Pos{}
	for _, o := range g.Operators {
		switch prev, dup := seen[o.ID]; {
		case o.ID == "":
			v.errorf(o.Pos, "an operator has no id; add id: <name> (it is recorded as by: operator:<name>)")
		case dup:
			v.errorf(o.Pos, "duplicate operator id %q (first declared at %s); operator ids must be unique", o.ID, prev)
		case !IDPattern.MatchString(o.ID):
			v.errorf(o.Pos, "operator id %q may only use letters, digits, '_', '.' and '-'", o.ID)
		default:
			seen[o.ID] = o.Pos
		}
		if o.Token == nil && claim == "" {
			v.errorf(o.Pos, "operator %q has no way to sign in: give it token: {env: VARIABLE}, or set gateway.identity.jwt.operator_claim so that a JWT naming it is accepted", o.ID)
		}
	}
}

// webhook checks gateway.approvals.notify.webhook.
func (v *validator) webhook(h *Webhook, at func(key string) Pos) {
	const where = "gateway.approvals.notify.webhook"
	if h.URL == "" {
		v.errorf(h.Pos, "%s needs url: the endpoint held calls are POSTed to (https, or http on a loopback host)", where)
	} else if msg := webURLProblem(h.URL); msg != "" {
		v.errorf(at("url"), "%s.url %q %s", where, shownURL(h.URL), msg)
	}
	for name, ref := range h.Headers {
		p := h.Pos
		if kp, ok := h.KeyPos["headers."+name]; ok {
			p = kp
		}
		switch {
		case !validHeaderName(name):
			v.errorf(p, "%s.headers: %q is not an HTTP header name (letters, digits and !#$%%&'*+-.^_`|~)", where, name)
		case ref == nil:
			v.errorf(p, "%s.headers.%s needs a value: {env: VARIABLE} or {file: PATH} (header values are secrets, never written inline)", where, name)
		}
	}
}

// validHeaderName reports whether name is an RFC 9110 token.
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		ok := c < 128 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c))
		if !ok {
			return false
		}
	}
	return true
}

// jwt checks gateway.identity.jwt; at gives the position of one of its keys'
// values.
func (v *validator) jwt(j *JWT, at func(key string) Pos) {
	const where = "gateway.identity.jwt"
	if j.Issuer == "" {
		v.errorf(j.Pos, "%s needs issuer: the URL your identity provider writes in iss (for example https://idp.example)", where)
	} else if msg := webURLProblem(j.Issuer); msg != "" {
		v.errorf(at("issuer"), "%s.issuer %q %s", where, shownURL(j.Issuer), msg)
	} else if strings.ContainsAny(j.Issuer, "?#") {
		v.errorf(at("issuer"), "%s.issuer %q must not have a query or fragment (OpenID Connect issuers never do); write the issuer exactly as the provider's iss", where, j.Issuer)
	}
	switch {
	case j.JWKSURL == "" && j.JWKSFile == "":
		v.errorf(j.Pos, "%s needs the issuer's keys: jwks_url: https://<idp>/jwks or jwks_file: <file> (a JWK Set)", where)
	case j.JWKSURL != "" && j.JWKSFile != "":
		v.errorf(j.Pos, "%s has both jwks_url and jwks_file; keep one", where)
	case j.JWKSURL != "":
		if msg := webURLProblem(j.JWKSURL); msg != "" {
			v.errorf(at("jwks_url"), "%s.jwks_url %q %s", where, shownURL(j.JWKSURL), msg)
		}
	}
	if j.Audience == "" {
		v.errorf(j.Pos, "%s needs audience: the resource URI naming this gateway (RFC 8707), for example https://toolgate.example/mcp", where)
	} else if u, err := url.Parse(j.Audience); err != nil || !u.IsAbs() || strings.Contains(j.Audience, "#") {
		v.errorf(at("audience"), "%s.audience %q must be an absolute URI without a fragment (an RFC 8707 resource), for example https://toolgate.example/mcp", where, j.Audience)
	}
	if j.ClockSkew.D() > MaxClockSkew {
		v.errorf(at("clock_skew"), "%s.clock_skew %s is more than %s; a larger leeway keeps expired tokens valid — fix the clocks (NTP) instead", where, j.ClockSkew.D(), MaxClockSkew)
	}
}

// webURLProblem says what is wrong with a URL toolgate fetches from or
// trusts for identity, or "" when nothing is: it must be absolute, carry no
// user name or password, and use https — plain http only for a loopback
// host, which nothing off this machine can intercept (for tests).
func webURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Hostname() == "":
		return "is not an absolute URL; write it like https://idp.example"
	case u.User != nil:
		return "must not carry a user name or password; secrets are never written inline"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
		return ""
	case u.Scheme == "http":
		return "must use https (http is accepted only for loopback hosts such as 127.0.0.1 or localhost, for tests)"
	default:
		return "must be an https URL"
	}
}

// shownURL is raw as an error may print it: a password written in it is
// masked, so that a load error never repeats a secret.
func shownURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return raw
}

// isLoopbackHost reports whether host (without port or brackets) names this
// machine: "localhost" or a loopback IP. A name that merely starts with one
// ("127.0.0.1.example") is not.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// valuePos is where the value under the mapping keys path was written in
// the document, or fallback when it cannot be found.
func valuePos(root *yaml.Node, fallback Pos, path ...string) Pos {
	n := resolveAlias(root)
	for _, key := range path {
		_, n = mappingValue(n, key)
		if n = resolveAlias(n); n == nil {
			return fallback
		}
	}
	return Pos{File: fallback.File, Line: n.Line, Col: n.Column}
}
