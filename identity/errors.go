package identity

import (
	"errors"
	"fmt"
)

// Reason names what failed in a token check, so the gateway can count and
// log refusals by kind while the HTTP answer stays generic.
type Reason string

// The reasons a token is refused.
const (
	ReasonMalformed    Reason = "malformed"     // not a compact JWS, too large, bad encoding
	ReasonAlgorithm    Reason = "algorithm"     // alg not on the allowlist (none, HS256, …)
	ReasonUnknownKey   Reason = "unknown_key"   // no key in the JWKS for the token's kid
	ReasonSignature    Reason = "signature"     // no key verifies the signature
	ReasonKeys         Reason = "keys"          // the JWKS could not be had at all
	ReasonIssuer       Reason = "issuer"        // iss is not the configured issuer
	ReasonAudience     Reason = "audience"      // aud does not name this gateway
	ReasonExpired      Reason = "expired"       // exp passed (beyond the clock skew), or absent
	ReasonNotYetValid  Reason = "not_yet_valid" // nbf or iat in the future (beyond the clock skew)
	ReasonAgentClaim   Reason = "agent_claim"   // the agent claim is missing, not a string, or empty
	ReasonUnknownAgent Reason = "unknown_agent" // the claim names no declared agent (the caller decides)
)

// Error is why a token was refused: Reason for metrics and the operator,
// Detail saying exactly what differed. It never carries the token itself.
type Error struct {
	Reason Reason
	Detail string
	Err    error // the library's error, when there is one
}

// Error implements error.
func (e *Error) Error() string {
	msg := "jwt " + string(e.Reason) + ": " + e.Detail
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying library error.
func (e *Error) Unwrap() error { return e.Err }

// ReasonOf returns the Reason of an error returned by this package, or ""
// for any other error.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// UnknownAgent is the error the caller returns when a valid token's agent
// claim names no declared agent, so that refusal reads like the others.
func UnknownAgent(claim, agent string) error {
	return &Error{Reason: ReasonUnknownAgent, Detail: fmt.Sprintf("claim %q names agent %q, which the workspace does not declare", claim, agent)}
}

func fail(r Reason, err error, format string, args ...any) *Error {
	return &Error{Reason: r, Detail: fmt.Sprintf(format, args...), Err: err}
}
