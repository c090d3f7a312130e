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
// chain live, so that every toolgate process of a deployment shares them
// (DESIGN §11). Path and Postgres are exclusive.
type State struct {
	Pos Pos
	// Path is the embedded store's directory, relative to the workspace
	// file's directory unless absolute; "" means DefaultStatePath (see
	// Workspace.StateDir).
	Path string `yaml:"path"`
	// Postgres, when set, makes PostgreSQL the store instead.
	Postgres *Postgres `yaml:"postgres"`
}

// Postgres is the shared store of a deployment spanning several machines.
type Postgres struct {
	Pos Pos
	// DSN is the connection string; it carries a password, so it is always
	// a SecretRef and never written inline.
	DSN *SecretRef `yaml:"dsn"`
}

// Sessions bounds the MCP sessions of each agent (DESIGN §8), so that one
// agent cannot exhaust the gateway by opening sessions and leaving them.
type Sessions struct {
	Pos Pos
	// MaxPerAgent caps the open sessions per agent per surface; zero means
	// DefaultSessionsPerAgent.
	MaxPerAgent Count `yaml:"max_per_agent"`
	// IdleTTL closes a session idle this long; zero means
	// DefaultSessionIdleTTL.
	IdleTTL Duration `yaml:"idle_ttl"`
}

// Streams bounds the long-lived streams clients hold open (DESIGN §8): a
// 2026-07-28 subscriptions/listen and a 2025 GET (SSE) stream each hold a
// connection and a goroutine until a side closes it, so one agent cannot
// open them without end. They have their own cap, not the sessions one:
// a 2026-07-28 client has no session to count them against, and a 2025
// session may hold none; and the cap is the agent's across surfaces (a
// stream is a connection of this process whatever surface it is on).
type Streams struct {
	Pos Pos
	// MaxPerAgent caps one agent's open streams, all surfaces together;
	// zero means DefaultStreamsPerAgent.
	MaxPerAgent Count `yaml:"max_per_agent"`
	// MaxTotal caps the open streams of every agent together in this
	// process; zero means DefaultStreamsTotal.
	MaxTotal Count `yaml:"max_total"`
}

// Identity declares how agents may authenticate besides per-agent bearer
// tokens (DESIGN §12).
type Identity struct {
	Pos Pos
	// JWT, when set, accepts OAuth 2.1 / OIDC access tokens.
	JWT *JWT `yaml:"jwt"`
}

// JWT accepts access tokens from one issuer for this gateway's audience;
// the agent is the value of AgentClaim and must be a declared agent.
// Exactly one of JWKSURL and JWKSFile is set once loaded.
type JWT struct {
	Pos Pos
	// Issuer must equal the token's iss: an absolute https URL (http only
	// for loopback hosts, for tests), with no query or fragment.
	Issuer string `yaml:"issuer"`
	// JWKSURL is where the issuer's signing keys are fetched (https, or http
	// on loopback).
	JWKSURL string `yaml:"jwks_url"`
	// JWKSFile holds the issuer's keys as a JWK Set, relative to the
	// workspace file's directory unless absolute (see Workspace.ResolvePath).
	JWKSFile string `yaml:"jwks_file"`
	// Audience is the RFC 8707 resource naming this gateway, an absolute
	// URI; a token whose aud does not contain it is refused.
	Audience string `yaml:"audience"`
	// AgentClaim names the claim holding the agent id; "" means
	// DefaultAgentClaim.
	AgentClaim string `yaml:"agent_claim"`
	// ClockSkew is the leeway on exp/nbf/iat, at most MaxClockSkew; zero
	// means DefaultClockSkew.
	ClockSkew Duration `yaml:"clock_skew"`
}

// Metrics configures the Prometheus /metrics endpoint (DESIGN §14).
type Metrics struct {
	Pos Pos
	// Open serves /metrics without the admin token; by default it needs it,
	// because metrics reveal which agents call which tools.
	Open bool `yaml:"open"`
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
