package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/toolgate/toolgate/approvals"
)

// Operator is one named approver of gateway.operators with a static token.
type Operator struct {
	ID    string
	Token string
}

// OperatorPrefix starts the "by" of a decision a named operator made
// (operator:alice); the shared admin token decides as approvals.ByOperator.
const OperatorPrefix = "operator:"

// whoKey carries, in a request's context, who Guard admitted.
type whoKey struct{}

// Who is the approver Guard admitted r as: approvals.ByOperator for the
// admin token, operator:<id> for a named operator.
func Who(r *http.Request) string {
	if w, ok := r.Context().Value(whoKey{}).(string); ok && w != "" {
		return w
	}
	return approvals.ByOperator
}

func withWho(r *http.Request, who string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), whoKey{}, who))
}

// operatorTokens index the named operators' tokens by digest, so a token
// is never compared or kept in the clear.
type operatorTokens map[[32]byte]string

func newOperatorTokens(ops []Operator) operatorTokens {
	m := operatorTokens{}
	for _, o := range ops {
		if o.Token != "" {
			m[sha256.Sum256([]byte(o.Token))] = o.ID
		}
	}
	return m
}

// identify says who tok belongs to: the admin token, a named operator's
// token, or (with OperatorJWT) a JWT naming a declared operator. Trust
// boundary: agents' tokens never match (the gateway refuses a workspace
// where one equals an operator's or the admin token), and a JWT counts
// only through the operator claim, never the agent claim.
func (s *Server) identify(ctx context.Context, tok string) (string, bool) {
	if tok == "" || !s.On() {
		return "", false
	}
	d := sha256.Sum256([]byte(tok))
	if s.hasAdmin && subtle.ConstantTimeCompare(d[:], s.digest[:]) == 1 {
		return approvals.ByOperator, true
	}
	if id, ok := s.operators[d]; ok {
		return OperatorPrefix + id, true
	}
	if s.opts.OperatorJWT != nil && strings.Count(tok, ".") == 2 {
		id, err := s.opts.OperatorJWT(ctx, tok)
		if err != nil {
			s.log.Info("operator JWT refused", "reason", err.Error())
			return "", false
		}
		return OperatorPrefix + id, true
	}
	return "", false
}

// handleWhoami answers who the request was admitted as, for the console.
func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"operator": Who(r)})
}
