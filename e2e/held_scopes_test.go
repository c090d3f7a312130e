package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// scopedJWTWorkspace: the agent declares notes:read and notes:write; the
// pack's read needs the first, its write both, and the proxied server's
// greet needs down:greet while ping needs nothing.
const scopedJWTWorkspace = `version: 1
gateway:
  audit: {path: audit.jsonl}
  identity:
    jwt: {issuer: "ISSUER", jwks_file: jwks.json, audience: "https://toolgate.test"}
mcp_servers:
  - id: down
    url: DOWNURL
    effects: {greet: read, ping: read}
    scope_overrides: {greet: [down:greet]}
command_packs:
  - id: notes
    permission: open
    commands:
      - {id: read, description: Reads., argv: [echo, read], effects: read, scopes: [notes:read]}
      - {id: write, description: Writes., argv: [echo, write], effects: write, scopes: [notes:read, notes:write]}
agents:
  - id: bot
    scopes: [notes:read, notes:write, down:greet]
    grants: [tool:notes:read, tool:notes:write, server:down]
`

// TestScopedJWTGetsOnlyItsScopes: with JWT identity the agent's effective
// scopes are its declared ones ∩ the token's scope claim. A token scoped
// to notes:read calls notes:read and ping (which need nothing more) and is
// refused notes:write and greet naming the scope it lacks — in the
// session era and in a 2026-07-28 stateless request alike — while a token
// granting everything the agent declares calls all of them, and a token
// with no scope claim only what needs no scope. `toolgate explain
// --scopes` shows the same narrowing.
func TestScopedJWTGetsOnlyItsScopes(t *testing.T) {
	t.Parallel()
	key := newSigner(t, "k1")
	down := newDownstream(t, "Greets someone.")
	const iss = "https://idp.toolgate.test"
	dir := t.TempDir()
	writeFile(t, dir, "jwks.json", string(jwksDoc(t, key)))
	ws := writeFile(t, dir, "toolgate.yaml", strings.NewReplacer("ISSUER", iss, "DOWNURL", down.URL).Replace(scopedJWTWorkspace))
	d := startFleetDaemon(t, ws, nil)
	tokenFor := func(scope any) string {
		c := jwtClaims(iss, "bot")
		if scope != nil {
			c = withClaim(c, "scope", scope)
		}
		return key.token(t, c)
	}
	narrow, full, none := tokenFor("notes:read"), tokenFor("notes:read notes:write down:greet other:scope"), tokenFor(nil)
	cases := []struct {
		token, surface, tool string
		missing              string // "" allowed
	}{
		{narrow, "notes", "read", ""},
		{narrow, "notes", "write", "notes:write"},
		{narrow, "down", "ping", ""},
		{narrow, "down", "greet", "down:greet"},
		{full, "notes", "write", ""},
		{full, "down", "greet", ""},
		{none, "notes", "read", "notes:read"},
		{none, "down", "ping", ""},
	}
	before := len(down.calls())
	for i, c := range cases {
		args := map[string]any{}
		if c.tool == "greet" {
			args["name"] = "ada"
		}
		s := rawConnect(t, d.base+"/mcp/"+c.surface, c.token)
		text, isErr := s.callText(c.tool, args)
		msg := modernCall(t, d.base+"/mcp/"+c.surface, c.token, "tools/call", c.tool, map[string]any{"name": c.tool, "arguments": args})
		modern := fmt.Sprint(msg["result"])
		if c.missing == "" {
			if isErr || strings.Contains(modern, "DENIED") {
				t.Errorf("case %d %s:%s: refused %q / %s", i, c.surface, c.tool, text, modern)
			}
			continue
		}
		want := "DENIED: missing scopes: " + c.missing + " ("
		if !isErr || !strings.HasPrefix(text, want) || !strings.Contains(text, "the access token grants") || !strings.Contains(modern, want) {
			t.Errorf("case %d %s:%s: %q / %s, want %q…", i, c.surface, c.tool, text, modern, want)
		}
	}
	// Each allowed proxied case reached the server twice (session and
	// stateless), a refused one never.
	if n := len(down.calls()) - before; n != 3*2 {
		t.Errorf("the downstream received %d tools/calls, want 6 (the three proxied cases allowed, twice each)", n)
	}
	refused := 0
	for _, ev := range readAudit(t, dir+"/audit.jsonl") {
		if ev.Decision == "deny" && strings.HasPrefix(ev.Reason, "missing scopes: ") && ev.Agent == "bot" {
			refused++
		}
	}
	if refused != 3*2 {
		t.Errorf("%d refusals audited, want 6 (three cases, twice each)", refused)
	}
	r := toolgate(t, dir, nil, "explain", "-w", ws, "--agent", "bot", "--tool", "notes:write", "--scopes", "notes:read")
	if r.code != 0 || !strings.Contains(r.stdout, "decision: deny") || !strings.Contains(r.stdout, "missing scopes: notes:write") {
		t.Errorf("explain --scopes: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
