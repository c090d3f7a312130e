package gateway

import (
	"crypto/subtle"
	"fmt"

	"github.com/toolgate/toolgate/admin"
)

// initAdmin resolves gateway.admin_token and builds the admin API and
// console on this gateway's broker, audit and status. Without a token they
// answer 403 with how to turn them on; a token equal to an agent's is
// refused, since that agent could then approve its own calls.
func (g *Gateway) initAdmin(getenv func(string) string, agentTokens map[string]string) error {
	opts := admin.Options{
		Approvals:      g.approvals,
		Audit:          g.audit,
		Status:         func() any { return g.Status() },
		AllowOrigin:    g.allowOrigin,
		AllowedOrigins: g.ws.Gateway.AllowedOrigins,
		Logger:         g.log,
	}
	ref := g.ws.Gateway.AdminToken
	tok, err := "", error(nil)
	if ref != nil {
		tok, err = ref.Resolve(getenv)
	}
	if err == nil && ref != nil {
		if err := ref.CheckToken("gateway.admin_token", tok); err != nil {
			return err
		}
	}
	switch {
	case ref == nil:
		opts.Off = "the admin API is off: set gateway.admin_token: {env: NAME} in the workspace and export NAME"
	case err != nil || tok == "":
		g.log.Warn("admin token unavailable; the admin API and console are off", "err", err)
		opts.Off = fmt.Sprintf("the admin API is off: gateway.admin_token could not be read (%v)", err)
	default:
		for agent, at := range agentTokens {
			if subtle.ConstantTimeCompare([]byte(at), []byte(tok)) == 1 {
				return fmt.Errorf("%s: gateway.admin_token has the same value as agent %q's token; the admin token must be a secret of its own (an agent holding it could approve its own calls)", ref.Pos, agent)
			}
		}
		opts.Token = tok
	}
	g.admin = admin.New(opts)
	return nil
}
