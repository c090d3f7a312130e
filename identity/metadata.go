package identity

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WellKnownPrefix is where RFC 9728 puts protected-resource metadata: the
// prefix goes between the host and the resource's path.
const WellKnownPrefix = "/.well-known/oauth-protected-resource"

// ResourceMetadata is the RFC 9728 protected-resource metadata document a
// client reads to learn which authorization server issues tokens for a
// resource (one per /mcp/<surface> endpoint).
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// NewResourceMetadata describes resource (the absolute URL of an MCP
// endpoint, as clients reach it) protected by tokens from issuer. Tokens
// are accepted in the Authorization header only (never in a query or body).
func NewResourceMetadata(resource, issuer string, scopes []string) (ResourceMetadata, error) {
	if _, err := MetadataURL(resource); err != nil {
		return ResourceMetadata{}, err
	}
	m := ResourceMetadata{
		Resource:               resource,
		ScopesSupported:        scopes,
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "toolgate",
	}
	if issuer != "" {
		m.AuthorizationServers = []string{issuer}
	}
	return m, nil
}

// MetadataURL is the well-known metadata URL of resource:
// https://gw/mcp/s → https://gw/.well-known/oauth-protected-resource/mcp/s.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil {
		return "", fmt.Errorf("resource %q: %v", resource, err)
	}
	if (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("resource %q: want an absolute http(s) URL", resource)
	}
	if u.Fragment != "" || u.RawQuery != "" || u.User != nil {
		return "", fmt.Errorf("resource %q: a resource identifier has no query, fragment or user info (RFC 9728 §1.2)", resource)
	}
	path := strings.TrimSuffix(u.EscapedPath(), "/")
	return u.Scheme + "://" + u.Host + WellKnownPrefix + path, nil
}

// WellKnownPath is the path the gateway serves the metadata of the MCP
// endpoint at endpointPath on: "/mcp/s" → "/.well-known/oauth-protected-resource/mcp/s".
func WellKnownPath(endpointPath string) string {
	return WellKnownPrefix + "/" + strings.Trim(endpointPath, "/")
}

// Handler serves the document as JSON to GET and HEAD.
func (m ResourceMetadata) Handler() http.Handler {
	body, _ := json.Marshal(m) // strings and string slices only: cannot fail
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}

// Challenge parameters beyond resource_metadata (RFC 6750 §3). The gateway
// keeps Description generic: the precise reason goes to its log only.
type Challenge struct {
	Error       string   // "invalid_token", "insufficient_scope", or "" when no token came
	Description string   // error_description
	Scopes      []string // scope
}

// WWWAuthenticate builds the value of the WWW-Authenticate header of a 401:
// Bearer resource_metadata="…"[, error="…"][, error_description="…"][, scope="…"].
func WWWAuthenticate(metadataURL string, c Challenge) string {
	var b strings.Builder
	b.WriteString("Bearer resource_metadata=")
	b.WriteString(quote(metadataURL))
	if c.Error != "" {
		b.WriteString(", error=")
		b.WriteString(quote(c.Error))
	}
	if c.Description != "" {
		b.WriteString(", error_description=")
		b.WriteString(quote(c.Description))
	}
	if len(c.Scopes) > 0 {
		b.WriteString(", scope=")
		b.WriteString(quote(strings.Join(c.Scopes, " ")))
	}
	return b.String()
}

// quote makes an RFC 9110 quoted-string; control characters (which could
// split the header) are dropped, quotes and backslashes escaped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			continue
		case r == '"' || r == '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}
