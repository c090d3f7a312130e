package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// tokenTable maps bearer tokens to agent ids. Tokens are compared in
// constant time against every entry, so response timing reveals neither
// which agents exist nor how much of a token matched. A reload replaces
// the entries atomically.
type tokenTable struct {
	entries atomic.Pointer[[]tokenEntry]
}

type tokenEntry struct {
	digest [32]byte
	agent  string
}

func newTokenTable(tokens map[string]string) *tokenTable {
	t := &tokenTable{}
	t.replace(tokens)
	return t
}

// replace makes tokens the table's entries.
func (t *tokenTable) replace(tokens map[string]string) {
	entries := make([]tokenEntry, 0, len(tokens))
	for agent, tok := range tokens {
		if tok == "" {
			continue
		}
		entries = append(entries, tokenEntry{digest: sha256.Sum256([]byte(tok)), agent: agent})
	}
	t.entries.Store(&entries)
}

// lookup returns the agent whose token is presented, or "" when none is.
func (t *tokenTable) lookup(token string) string {
	if token == "" {
		return ""
	}
	d := sha256.Sum256([]byte(token))
	found := ""
	for _, e := range *t.entries.Load() {
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			found = e.agent
		}
	}
	return found
}

// bearer extracts the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// unauthorized answers 401 with the challenge RFC 6750 asks for.
func unauthorized(w http.ResponseWriter, desc string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="toolgate", error="invalid_token", error_description="`+desc+`"`)
	http.Error(w, "unauthorized: "+desc, http.StatusUnauthorized)
}

// originAllowed guards against DNS rebinding and cross-site requests: a
// request from a browser carries Origin, and only loopback origins (or those
// the workspace lists) may drive the gateway. Requests without Origin come
// from non-browser clients and are judged by their token alone.
func originAllowed(r *http.Request, allowed []string) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return hostAllowed(r)
	}
	for _, a := range allowed {
		if strings.EqualFold(a, o) {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return isLoopbackHost(u.Hostname()) && hostAllowed(r)
}

// hostAllowed rejects a loopback listener reached under a non-loopback Host
// name, the signature of DNS rebinding.
func hostAllowed(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	host, _, err := net.SplitHostPort(local.String())
	if err != nil || !isLoopbackHost(host) {
		return true
	}
	h := r.Host
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	return isLoopbackHost(h)
}

func isLoopbackHost(h string) bool {
	h = strings.Trim(h, "[]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
