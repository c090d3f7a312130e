package identity

import (
	"log/slog"

	"github.com/toolgate/toolgate/workspace"
)

// ConfigFromWorkspace is the Config of ws's gateway.identity.jwt, with a
// relative jwks_file resolved against the workspace file; ok is false when
// the workspace declares no JWT identity. log receives key refresh
// failures (nil discards).
func ConfigFromWorkspace(ws *workspace.Workspace, log *slog.Logger) (cfg Config, ok bool) {
	j := ws.Gateway.Identity.JWT
	if j == nil {
		return Config{}, false
	}
	cfg = Config{
		Issuer:     j.Issuer,
		JWKSURL:    j.JWKSURL,
		Audience:   j.Audience,
		AgentClaim: j.AgentClaimOrDefault(),
		ClockSkew:  j.ClockSkewOrDefault(),
		Logger:     log,
	}
	if j.JWKSFile != "" {
		cfg.JWKSFile = ws.ResolvePath(j.JWKSFile)
	}
	return cfg, true
}
