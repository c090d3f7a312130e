package workspace

import (
	"path/filepath"
	"time"
)

// Defaults for the gateway fields a workspace may leave out. Consumers read
// them through the ...OrDefault methods so that "not declared" has one
// meaning everywhere.
const (
	// DefaultStatePath is the embedded store's directory, relative to the
	// workspace file's directory.
	DefaultStatePath = ".toolgate"
	// DefaultMaxPending is how many approval requests one agent may have
	// waiting at once.
	DefaultMaxPending = 32
	// DefaultSessionsPerAgent is how many MCP sessions one agent may hold
	// open on one surface.
	DefaultSessionsPerAgent = 16
	// DefaultStreamsPerAgent is how many long-lived streams (2026-07-28
	// subscriptions/listen, 2025 GET SSE streams) one agent may hold open
	// across all surfaces.
	DefaultStreamsPerAgent = 16
	// DefaultStreamsTotal is how many long-lived streams the process holds
	// open for all agents together.
	DefaultStreamsTotal = 1024
	// DefaultSessionIdleTTL is how long an idle MCP session stays open.
	DefaultSessionIdleTTL = 5 * time.Minute
	// DefaultBodyTimeout is the read deadline for a whole HTTP request body.
	DefaultBodyTimeout = 10 * time.Second
	// DefaultAgentClaim is the JWT claim that names the agent.
	DefaultAgentClaim = "sub"
	// DefaultClockSkew is how far a JWT's exp/nbf/iat may be off the
	// gateway's clock.
	DefaultClockSkew = 60 * time.Second
	// MaxClockSkew is the largest clock_skew accepted: more would let an
	// expired token live on for a long time.
	MaxClockSkew = 5 * time.Minute
)

// State says where approvals, tasks, jobs and (with PostgreSQL) the audit
// chain live, so that every toolgate process of a deployment shares them.
// Path and Postgres are exclusive; neither means the embedded store in
// DefaultStatePath (see Workspace.StateDir).
type State struct {
	Pos      Pos
	Path     string    `yaml:"path" doc:"The embedded store's directory, relative to the workspace file's directory unless absolute."`
	Postgres *Postgres `yaml:"postgres" doc:"Makes a PostgreSQL database the store instead, shared by every toolgate process of a deployment (the audit chain too)."`
}

// Postgres is the shared store of a deployment spanning several machines.
type Postgres struct {
	Pos Pos
	DSN *SecretRef `yaml:"dsn" schema:"required" doc:"The PostgreSQL connection string, as {env: VARIABLE} or {file: PATH}; it carries a password, so it is never written inline."`
}

// Sessions bounds the MCP sessions of each agent, so that one agent cannot
// exhaust the gateway by opening sessions and leaving them; zero values
// mean the defaults (see MaxPerAgentOrDefault, IdleTTLOrDefault).
type Sessions struct {
	Pos         Pos
	MaxPerAgent Count    `yaml:"max_per_agent" doc:"How many MCP sessions one agent may hold open on one surface."`
	IdleTTL     Duration `yaml:"idle_ttl" doc:"How long an idle MCP session stays open before the gateway closes it."`
}

// Streams bounds the long-lived streams clients hold open: a
// 2026-07-28 subscriptions/listen and a 2025 GET (SSE) stream each hold a
// connection and a goroutine until a side closes it, so one agent cannot
// open them without end. They have their own cap, not the sessions one:
// a 2026-07-28 client has no session to count them against, and a 2025
// session may hold none; and the cap is the agent's across surfaces (a
// stream is a connection of this process whatever surface it is on).
type Streams struct {
	Pos         Pos
	MaxPerAgent Count `yaml:"max_per_agent" doc:"How many long-lived streams (subscriptions/listen, GET event streams) one agent may hold open, all surfaces together."`
	MaxTotal    Count `yaml:"max_total" doc:"How many long-lived streams every agent together may hold open in one toolgate process."`
}

// Identity declares how agents may authenticate besides per-agent bearer
// tokens.
type Identity struct {
	Pos Pos
	JWT *JWT `yaml:"jwt" doc:"Accept OAuth 2.1 / OpenID Connect access tokens (JWTs) from one issuer."`
}

// JWT accepts access tokens from one issuer for this gateway's audience;
// the agent is the value of AgentClaim and must be a declared agent.
// Exactly one of JWKSURL and JWKSFile is set once loaded; zero values of
// AgentClaim and ClockSkew mean the defaults (see their OrDefault methods).
type JWT struct {
	Pos        Pos
	Issuer     string   `yaml:"issuer" schema:"required" doc:"The token issuer, exactly as the provider writes iss: an https URL (http only for loopback hosts) without query or fragment."`
	JWKSURL    string   `yaml:"jwks_url" doc:"Where the issuer's signing keys (a JWK Set) are fetched: an https URL (http only for loopback hosts). Give jwks_url or jwks_file."`
	JWKSFile   string   `yaml:"jwks_file" doc:"A file holding the issuer's signing keys as a JWK Set, relative to the workspace file's directory unless absolute. Give jwks_url or jwks_file."`
	Audience   string   `yaml:"audience" schema:"required" doc:"The absolute URI naming this gateway (an RFC 8707 resource); a token whose aud does not contain it is refused."`
	AgentClaim string   `yaml:"agent_claim" doc:"The token claim whose value is the agent id."`
	ClockSkew  Duration `yaml:"clock_skew" doc:"How far a token's exp, nbf and iat may be off the gateway's clock; at most 5m."`
	// OperatorClaim, when set, lets gateway.operators sign in with a JWT
	// of this issuer: its value must be a declared operator's id.
	OperatorClaim string `yaml:"operator_claim" doc:"The token claim whose value names an operator of gateway.operators: a JWT of this issuer carrying it is accepted by the admin API and console as that operator. Unset, JWTs never reach the admin API."`
}

// Metrics configures the Prometheus /metrics endpoint.
type Metrics struct {
	Pos  Pos
	Open bool `yaml:"open" doc:"Serve /metrics without the admin token. By default it needs the token, because metrics reveal which agents call which tools."`
}

// MaxPendingOrDefault is the cap on one agent's waiting approvals.
func (a Approvals) MaxPendingOrDefault() int {
	return a.MaxPending.OrDefault(DefaultMaxPending)
}

// MaxPerAgentOrDefault is the cap on one agent's open sessions per surface.
func (s Sessions) MaxPerAgentOrDefault() int {
	return s.MaxPerAgent.OrDefault(DefaultSessionsPerAgent)
}

// MaxPerAgentOrDefault is the cap on one agent's open streams.
func (s Streams) MaxPerAgentOrDefault() int {
	return s.MaxPerAgent.OrDefault(DefaultStreamsPerAgent)
}

// MaxTotalOrDefault is the cap on the process's open streams.
func (s Streams) MaxTotalOrDefault() int {
	return s.MaxTotal.OrDefault(DefaultStreamsTotal)
}

// IdleTTLOrDefault is how long an idle session stays open.
func (s Sessions) IdleTTLOrDefault() time.Duration {
	return s.IdleTTL.OrDefault(DefaultSessionIdleTTL)
}

// BodyTimeoutOrDefault is the read deadline for a whole request body.
func (g Gateway) BodyTimeoutOrDefault() time.Duration {
	return g.BodyTimeout.OrDefault(DefaultBodyTimeout)
}

// AgentClaimOrDefault is the claim that names the agent.
func (j JWT) AgentClaimOrDefault() string {
	if j.AgentClaim == "" {
		return DefaultAgentClaim
	}
	return j.AgentClaim
}

// ClockSkewOrDefault is the leeway on a token's time claims.
func (j JWT) ClockSkewOrDefault() time.Duration {
	return j.ClockSkew.OrDefault(DefaultClockSkew)
}

// ResolvePath makes a path written in the workspace relative to the
// workspace file's directory, leaving absolute paths as they are.
func (ws *Workspace) ResolvePath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(ws.Path), p)
}

// StateDir is the embedded store's directory (state.path, or
// DefaultStatePath), resolved against the workspace file's directory. It
// is meaningful only when State.Postgres is nil.
func (ws *Workspace) StateDir() string {
	p := ws.Gateway.State.Path
	if p == "" {
		p = DefaultStatePath
	}
	return ws.ResolvePath(p)
}
