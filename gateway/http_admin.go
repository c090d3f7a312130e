package gateway

import (
	"context"
	"crypto/subtle"
	"fmt"

	"github.com/toolgate/toolgate/admin"
	"github.com/toolgate/toolgate/identity"
	"github.com/toolgate/toolgate/metrics"
	"github.com/toolgate/toolgate/workspace"
)

// initAdmin resolves gateway.admin_token and gateway.operators and builds
// the admin API and console on this gateway's broker, audit and status.
// With neither they answer 403 with how to turn them on; a token equal to
// an agent's (or two operators sharing one) is refused, since that agent
// could then approve its own calls, and a decision would be recorded
// under the wrong name.
func (g *Gateway) initAdmin(getenv func(string) string, agentTokens map[string]string) error {
	opts := admin.Options{
		Approvals:      g.approvals,
		Audit:          g.audit,
		Status:         func() any { return g.Status() },
		AllowOrigin:    g.allowOrigin,
		AllowedOrigins: g.ws.Gateway.AllowedOrigins,
		Logger:         g.log,
		OnRefused:      func(reason string) { g.tokenRefused(metrics.EndpointAdmin, reason) },
	}
	// owners maps each admin-side secret to who holds it, to find reuse.
	owners := map[string]string{}
	claim := func(tok, who string, at workspace.Pos) error {
		for agent, at2 := range agentTokens {
			if subtle.ConstantTimeCompare([]byte(at2), []byte(tok)) == 1 {
				return fmt.Errorf("%s: %s has the same value as agent %q's token; it must be a secret of its own (an agent holding it could approve its own calls)", at, who, agent)
			}
		}
		for other, prev := range owners {
			if subtle.ConstantTimeCompare([]byte(other), []byte(tok)) == 1 {
				return fmt.Errorf("%s: %s has the same value as %s; each must be a secret of its own, or decisions are recorded under the wrong name", at, who, prev)
			}
		}
		owners[tok] = who
		return nil
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
	case err != nil || tok == "":
		g.log.Warn("admin token unavailable; the admin API and console take only the operators' tokens", "err", err)
		opts.Off = fmt.Sprintf("the admin API is off: gateway.admin_token could not be read (%v)", err)
	default:
		if err := claim(tok, "gateway.admin_token", ref.Pos); err != nil {
			return err
		}
		opts.Token = tok
	}
	for _, o := range g.ws.Gateway.Operators {
		if o.Token == nil {
			continue
		}
		ot, err := o.Token.Resolve(getenv)
		if err != nil || ot == "" {
			return fmt.Errorf("%s: operator %q's token could not be read (%v); export it, or remove the operator", o.Token.Pos, o.ID, err)
		}
		if err := claim(ot, "operator "+o.ID+"'s token", o.Token.Pos); err != nil {
			return err
		}
		opts.Operators = append(opts.Operators, admin.Operator{ID: o.ID, Token: ot})
	}
	if opts.OperatorJWT, err = g.operatorJWT(); err != nil {
		return err
	}
	if opts.Token != "" || len(opts.Operators) > 0 || opts.OperatorJWT != nil {
		opts.Off = ""
	} else if opts.Off == "" {
		opts.Off = "the admin API is off: set gateway.admin_token: {env: NAME} (or gateway.operators) in the workspace and export NAME"
	}
	g.admin = admin.New(opts)
	return nil
}

// operatorJWT is the operators' JWT sign-in of
// gateway.identity.jwt.operator_claim: a verifier of the same issuer and
// audience whose named claim must be a declared operator; nil without one.
func (g *Gateway) operatorJWT() (func(context.Context, string) (string, error), error) {
	j := g.ws.Gateway.Identity.JWT
	if j == nil || j.OperatorClaim == "" {
		return nil, nil
	}
	cfg, _ := identity.ConfigFromWorkspace(g.ws, g.log)
	cfg.AgentClaim = j.OperatorClaim
	v, err := identity.NewVerifier(cfg)
	if err != nil {
		return nil, fmt.Errorf("gateway.identity.jwt (operator sign-in): %w", err)
	}
	declared := map[string]bool{}
	for _, o := range g.ws.Gateway.Operators {
		declared[o.ID] = true
	}
	return func(ctx context.Context, tok string) (string, error) {
		id, err := v.Verify(ctx, tok)
		if err != nil {
			return "", err
		}
		if !declared[id.Agent] {
			return "", fmt.Errorf("the token's %s claim names %q, who is not in gateway.operators", j.OperatorClaim, id.Agent)
		}
		return id.Agent, nil
	}, nil
}
