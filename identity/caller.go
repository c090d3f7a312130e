package identity

import "context"

// Caller is who an MCP request comes from, as the Authenticator bound it
// from the request's credentials (never from its body).
type Caller struct {
	Agent string
	// TokenScoped is true when the caller presented an access token
	// (JWT): it may then use only those of the agent's declared scopes
	// that the token grants (Scopes, its scope or scp claim). A token
	// without the claim grants no scope. A static agent token is not
	// scoped: the agent's declared scopes apply as they are.
	TokenScoped bool
	Scopes      []string
}

type callerKey struct{}

// WithCaller records c in ctx for the request's handlers; the call
// pipeline reads the token's scopes from it.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the Caller WithCaller recorded, and false outside an
// authenticated request (stdio, where the launch flag is the identity).
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}
