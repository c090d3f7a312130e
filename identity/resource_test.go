package identity

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestResourceMetadata(t *testing.T) {
	t.Parallel()
	j := gwResource(t, newECKey(t, "k"))
	serve := func(j *Resource, method, path, host string) (*httptest.ResponseRecorder, map[string]any) {
		mux := http.NewServeMux()
		mux.HandleFunc(WellKnownPrefix+"/mcp/{surface}", func(w http.ResponseWriter, r *http.Request) {
			j.ServeMetadata(w, r, r.PathValue("surface"))
		})
		r := httptest.NewRequest(method, path, nil)
		if host != "" {
			r.Host = host
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		var doc map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &doc)
		return w, doc
	}
	w, doc := serve(j, "GET", WellKnownPrefix+"/mcp/json-tools", "evil.test")
	if w.Code != 200 || doc["resource"] != "https://gw.test/mcp/json-tools" || doc["authorization_servers"].([]any)[0] != testIssuer {
		t.Fatalf("metadata: HTTP %d %v", w.Code, doc)
	}
	// An undeclared surface gets the same kind of answer: existence is
	// not disclosed to an unauthenticated caller.
	w2, doc2 := serve(j, "GET", WellKnownPrefix+"/mcp/no-such-surface", "")
	if w2.Code != 200 || doc2["resource"] != "https://gw.test/mcp/no-such-surface" || len(doc2) != len(doc) {
		t.Fatalf("undeclared surface: HTTP %d %v", w2.Code, doc2)
	}
	if w, _ := serve(j, "GET", WellKnownPrefix+"/mcp/a%22b", ""); w.Code != 404 {
		t.Errorf("a surface id that is not one: HTTP %d, want 404", w.Code)
	}
	if w, _ := serve(j, "POST", WellKnownPrefix+"/mcp/json-tools", ""); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: HTTP %d", w.Code)
	}
	// Without gateway.identity.jwt there is nothing to describe.
	if w, _ := serve(nil, "GET", WellKnownPrefix+"/mcp/json-tools", ""); w.Code != 404 {
		t.Errorf("no jwt identity: HTTP %d", w.Code)
	}
}

// TestResourceURLFromHost: an audience that is not a URL leaves the public
// document's URLs to how the request arrived, and accepts no per-endpoint
// audience (nothing is built from the request's Host for verification).
func TestResourceURLFromHost(t *testing.T) {
	t.Parallel()
	path := t.TempDir() + "/jwks.json"
	writeFileAtomic(t, path, jwks(t, newECKey(t, "k")))
	j, err := NewResource(Config{Issuer: testIssuer, Audience: "toolgate-gw", JWKSFile: path})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = "gw.example:7330"
	if got := j.resourceURL(r, "notes"); got != "http://gw.example:7330/mcp/notes" {
		t.Errorf("resourceURL = %q", got)
	}
	if aud := j.audiences("notes"); aud != nil {
		t.Errorf("audiences = %v, want none beyond the configured one", aud)
	}
	w := httptest.NewRecorder()
	j.Challenge(w, r, "notes", false)
	if got := w.Header().Get("WWW-Authenticate"); w.Code != 401 || got != `Bearer resource_metadata="http://gw.example:7330/.well-known/oauth-protected-resource/mcp/notes"` {
		t.Errorf("challenge: HTTP %d %q", w.Code, got)
	}
	if !strings.Contains(w.Body.String(), "send Authorization: Bearer") {
		t.Errorf("challenge body %q does not say what to send", w.Body)
	}
}

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	Unauthorized(w, "send Authorization: Bearer <agent token>")
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Bearer realm="toolgate", error="invalid_token", error_description="send Authorization: Bearer <agent token>"` ||
		!strings.HasPrefix(w.Body.String(), "unauthorized: send Authorization") {
		t.Errorf("HTTP %d %q %q", w.Code, w.Header().Get("WWW-Authenticate"), w.Body)
	}
}
