package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolgate/toolgate/approvals"
)

// TestNamedOperators: each operator's own token (or a JWT the gateway's
// verifier accepts) is recorded as by: operator:<id> on the decisions it
// makes, over the API and through a console session; the shared admin
// token stays "operator"; anything else is refused.
func TestNamedOperators(t *testing.T) {
	t.Parallel()
	e := newAdminEnv(t, func(o *Options) {
		o.Operators = []Operator{{ID: "alice", Token: "alice-secret-token"}, {ID: "bob", Token: "bob-secret-token"}}
		o.OperatorJWT = func(_ context.Context, tok string) (string, error) {
			if tok == "header.carol.sig" {
				return "carol", nil
			}
			return "", errors.New("not an operator's token")
		}
	})
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	cases := []struct {
		name string
		hdr  map[string]string
		want string // "" for refused
	}{
		{"admin token", adminAuth, approvals.ByOperator},
		{"alice's token", bearer("alice-secret-token"), "operator:alice"},
		{"bob's token", bearer("bob-secret-token"), "operator:bob"},
		{"an operator's JWT", bearer("header.carol.sig"), "operator:carol"},
		{"a JWT the verifier refuses", bearer("header.mallory.sig"), ""},
		{"a made-up token", bearer("alice-secret-tokem"), ""},
	}
	for _, c := range cases {
		id := e.hold(t, "writer", "command:call:notes:"+strings.ReplaceAll(c.name, " ", "-"))
		resp := do(t, "POST", e.srv.URL+"/admin/approvals/"+id+"/approve", c.hdr, "")
		var got approvals.Request
		_ = json.NewDecoder(resp.Body).Decode(&got)
		switch {
		case c.want == "" && resp.StatusCode != http.StatusUnauthorized:
			t.Errorf("%s: %s, want 401", c.name, resp.Status)
		case c.want != "" && (resp.StatusCode != 200 || got.DecidedBy != c.want):
			t.Errorf("%s: %s by %q, want by %q", c.name, resp.Status, got.DecidedBy, c.want)
		}
	}
	if !e.s.IsToken("bob-secret-token") || e.s.IsToken("header.carol.sig") {
		t.Error("IsToken must know the operators' static tokens (and only those)")
	}

	// The console: bob signs in with his token; whoami and his denial say bob.
	login := do(t, "POST", e.srv.URL+"/ui/login", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": e.srv.URL},
		url.Values{"token": {"bob-secret-token"}}.Encode())
	var session string
	for _, c := range login.Cookies() {
		if c.Name == consoleCookie {
			session = consoleCookie + "=" + c.Value
		}
	}
	if session == "" {
		t.Fatalf("console login as bob: %s", login.Status)
	}
	console := map[string]string{"Cookie": session, "Origin": e.srv.URL, consoleHeader: "1"}
	var who struct{ Operator string }
	_ = json.NewDecoder(do(t, "GET", e.srv.URL+"/admin/whoami", console, "").Body).Decode(&who)
	if who.Operator != "operator:bob" {
		t.Errorf("whoami on bob's console: %q", who.Operator)
	}
	id := e.hold(t, "writer", "command:call:vault:drop")
	var got approvals.Request
	resp := do(t, "POST", e.srv.URL+"/admin/approvals/"+id+"/deny", console, `{"reason":"no","for":"10m"}`)
	_ = json.NewDecoder(resp.Body).Decode(&got)
	if got.DecidedBy != "operator:bob" || got.Rule == nil || got.Rule.By != "operator:bob" || got.Rule.Effect != approvals.Denied {
		t.Errorf("console deny --for: %s %+v", resp.Status, got)
	}
	var rules []approvals.TimedRule
	_ = json.NewDecoder(do(t, "GET", e.srv.URL+"/admin/rules", console, "").Body).Decode(&rules)
	if len(rules) != 1 || rules[0].ID != got.Rule.ID {
		t.Errorf("live rules %+v", rules)
	}
	for i, bad := range []string{`{"for":"soon"}`, `{"for":"-1h"}`, `{"for":"72h"}`, `{"for":"1h"}`} { // the last: strict
		id := e.hold(t, "writer", "command:call:notes:bad-for-"+string(rune('a'+i)))
		if resp := do(t, "POST", e.srv.URL+"/admin/approvals/"+id+"/approve", adminAuth, bad); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("approve %s: %s, want 400", bad, resp.Status)
		}
	}
}
