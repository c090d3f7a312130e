package harness

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/toolgate/toolgate/workspace"
)

var envVarRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// DefaultTokenVar is the variable an http-mode config reads an agent's
// OAuth access token from when the agent has no static token:
// TOOLGATE_TOKEN_<AGENT>, upper-cased, other characters as '_'.
func DefaultTokenVar(agent string) string {
	var b strings.Builder
	b.WriteString("TOOLGATE_TOKEN_")
	for _, r := range strings.ToUpper(agent) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// tokenReference is how harness h writes a reference to variable v in the
// Authorization header of an http server entry.
func tokenReference(h Harness, v string) string {
	switch h {
	case Codex:
		return "bearer_token_env_var = \"" + v + "\" (Codex sends Authorization: Bearer $" + v + ")"
	case Cursor, VSCode:
		return "Authorization: Bearer ${env:" + v + "}"
	case OpenCode:
		return "Authorization: Bearer {env:" + v + "}"
	}
	return "Authorization: Bearer ${" + v + "}" // Claude Code, Gemini CLI
}

// TokenNote says, for a person reading an http-mode config, how harness h
// sends the agent's token: which variable, in which syntax and, when the
// workspace accepts OAuth access tokens, what the token must say and that
// the harness reads the variable when it starts the server (a renewed
// token needs a restart of the harness). It is written to stderr, so the
// config on stdout stays valid.
func TokenNote(h Harness, ws *workspace.Workspace, agent, tokenVar string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "toolgate mcp-config: %s sends the token of agent %q as %s; export %s before starting it (the config holds only the reference).\n", h, agent, tokenReference(h, tokenVar), tokenVar)
	j := ws.Gateway.Identity.JWT
	if j == nil {
		return b.String()
	}
	fmt.Fprintf(&b, "toolgate mcp-config: gateway.identity.jwt is set: %s may hold an OAuth access token (a JWT) instead of a static token — issued by %s, with aud %s (or the endpoint's URL under it, e.g. %s/mcp/<surface>), and claim %q = %q.\n",
		tokenVar, j.Issuer, j.Audience, strings.TrimSuffix(j.Audience, "/"), j.AgentClaimOrDefault(), agent)
	fmt.Fprintf(&b, "toolgate mcp-config: %s reads the variable when it starts the MCP server: when the token expires, put a fresh one in %s and restart it. Without a valid token toolgate answers 401 with WWW-Authenticate: Bearer resource_metadata=\"…/.well-known/oauth-protected-resource/mcp/<surface>\", which names the issuer.\n", h, tokenVar)
	return b.String()
}
