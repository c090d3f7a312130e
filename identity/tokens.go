package identity

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"sync/atomic"
)

// Tokens maps the agents' static bearer tokens to agent ids. A presented
// token is compared in constant time against every entry, so response
// timing reveals neither which agents exist nor how much of a token
// matched; only SHA-256 digests are kept. Replace swaps the entries
// atomically (a workspace reload), so lookups take no lock.
type Tokens struct {
	entries atomic.Pointer[[]tokenEntry]
}

type tokenEntry struct {
	digest [32]byte
	agent  string
}

// NewTokens returns a table of tokens (agent id → token); an empty token
// names nobody.
func NewTokens(tokens map[string]string) *Tokens {
	t := &Tokens{}
	t.Replace(tokens)
	return t
}

// Replace makes tokens the table's entries.
func (t *Tokens) Replace(tokens map[string]string) {
	entries := make([]tokenEntry, 0, len(tokens))
	for agent, tok := range tokens {
		if tok == "" {
			continue
		}
		entries = append(entries, tokenEntry{digest: sha256.Sum256([]byte(tok)), agent: agent})
	}
	t.entries.Store(&entries)
}

// Lookup returns the agent whose token is presented, or "" when none is.
func (t *Tokens) Lookup(token string) string {
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

// Bearer extracts the token of an "Authorization: Bearer <token>" header
// ("" when there is none, or another scheme).
func Bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}
