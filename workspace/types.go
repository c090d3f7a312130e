// Package workspace holds the declarations of a toolgate workspace file
// (toolgate.yaml) as typed Go values, and loads them strictly: unknown
// fields, unknown tiers and every structural mistake are errors carrying
// FILE:LINE:COL. It never imports the engines (grantcheck, packs, gateway);
// they import it and compile its declarations into their own views.
package workspace

// Pos is where a declaration was written, so that every later error can
// point an operator at the exact line to fix.
type Pos struct {
	File string
	Line int
	Col  int
}

// Tier is a permission tier of docs/approvals.md. The zero value means "not
// declared"; resolution (package tiers) turns it into cautious.
type Tier string

// The four tiers; anything else is a load error, never a silent default.
const (
	TierOpen     Tier = "open"
	TierCautious Tier = "cautious"
	TierStrict   Tier = "strict"
	TierReadonly Tier = "readonly"
)

// Effect is what a tool does to the world, as declared by the operator.
// Effects are never sniffed from names; undeclared means write.
type Effect string

// The two effects.
const (
	EffectRead  Effect = "read"
	EffectWrite Effect = "write"
)

// Tiers and Effects are the values a tier and an effect may take, in the
// order messages list them; the loader and the schema both read them.
var (
	Tiers   = []Tier{TierOpen, TierCautious, TierStrict, TierReadonly}
	Effects = []Effect{EffectRead, EffectWrite}
)

// FormatVersion is the one workspace format this toolgate reads (version:).
const FormatVersion = 1

// Workspace is one loaded toolgate.yaml with its bundled packs expanded.
//
// Every field read from YAML carries its description in a doc tag, the one
// place it is written: `toolgate schema` and docs/workspace.md are checked
// against it. Tags the loader and the schema share: enum (the values a
// string may take, enforced by the decoder), schema:"required" (a key the
// loader refuses to miss) and schema:"id" (a value matching IDPattern).
type Workspace struct {
	// Path is the file the workspace was loaded from.
	Path string
	// Revision is the SHA-256 (hex) of the file's bytes; approvals are bound
	// to it so that an edited workspace invalidates pending approvals.
	Revision string

	Version      int                    `yaml:"version" schema:"required" doc:"The workspace format. 1 is the only format this toolgate reads."`
	Gateway      Gateway                `yaml:"gateway" doc:"How the gateway listens, audits, waits for approvals and keeps its state."`
	Credentials  map[string]*Credential `yaml:"credentials" doc:"Named secrets, each read from an environment variable or a file, that pack env and server env or headers reference as {credential.<name>}."`
	MCPServers   []*MCPServer           `yaml:"mcp_servers" doc:"The downstream MCP servers toolgate proxies; each is one surface, served at /mcp/<id>."`
	CommandPacks []*CommandPack         `yaml:"command_packs" doc:"Sets of local command-line programs served as MCP tools; each pack is one surface."`
	Agents       []*Agent               `yaml:"agents" doc:"The identities that call tools, each bounded by its grants."`

	// Unread is set on a workspace loaded with errors (see Load); it is
	// the zero value after a clean load.
	Unread Unread `json:"-"`
}

// Unread says which kinds of names a workspace loaded with errors may be
// missing: a declaration that could not be read far enough to know its id
// (a list entry that is not a mapping, an id missing or invalid, a list
// under a misspelt key) may be the one a grant names, so a check that
// finds such a name undeclared does not report it.
type Unread struct {
	// Surfaces: an entry of mcp_servers or command_packs, or its id.
	Surfaces bool
	// Agents: an entry of agents, or its id.
	Agents bool
}

// Gateway configures the daemon itself. Fields left out take the defaults
// their ...OrDefault methods (gateway.go) apply.
type Gateway struct {
	Pos            Pos
	Listen         string      `yaml:"listen" doc:"The host:port the shared daemon listens on for agents and the operator console."`
	Audit          Audit       `yaml:"audit" doc:"The hash-chained audit log every decision is appended to."`
	Approvals      Approvals   `yaml:"approvals" doc:"How long a call waits for a human, how long an approval stays valid, and rules that approve without one."`
	AdminToken     *SecretRef  `yaml:"admin_token" doc:"The bearer token of the admin API and the operator console, as {env: VARIABLE} or {file: PATH}."`
	MaxBodyBytes   ByteSize    `yaml:"max_body" doc:"The largest HTTP request body the gateway reads; a larger request is refused."`
	AllowedOrigins []string    `yaml:"allowed_origins" doc:"Browser origins (scheme://host:port) allowed to call the gateway's HTTP endpoints: every endpoint takes a request carrying Origin only from these or from the gateway's own origin. Requests without Origin are judged by their token alone."`
	State          State       `yaml:"state" doc:"Where approvals, tasks and jobs are stored: an embedded store in a directory, or PostgreSQL shared by a deployment."`
	Sessions       Sessions    `yaml:"sessions" doc:"Bounds on the MCP sessions each agent may hold open."`
	Streams        Streams     `yaml:"streams" doc:"Bounds on the long-lived streams (2026-07-28 subscriptions/listen, 2025 GET event streams) each agent, and the whole process, may hold open."`
	BodyTimeout    Duration    `yaml:"body_timeout" doc:"How long a client may take to send a whole HTTP request body before the connection is closed."`
	Identity       Identity    `yaml:"identity" doc:"Ways agents authenticate besides their bearer tokens."`
	Metrics        Metrics     `yaml:"metrics" doc:"The Prometheus /metrics endpoint."`
	Operators      []*Operator `yaml:"operators" doc:"The named people who approve and deny calls; each decision is recorded as made by one of them (by: operator:<id>) instead of by the shared admin token."`
}

// Operator is one named approver: the admin API and the console take its
// own token (or, with gateway.identity.jwt.operator_claim, a JWT naming
// it), and every approval or denial it makes is recorded under its id.
type Operator struct {
	Pos   Pos
	ID    string     `yaml:"id" schema:"required,id" doc:"The operator's name, recorded as by: operator:<id> on each approval and denial it makes."`
	Token *SecretRef `yaml:"token" doc:"The operator's own bearer token for the admin API and console, as {env: VARIABLE} or {file: PATH}. Leave it out for an operator who signs in with a JWT carrying gateway.identity.jwt.operator_claim."`
}

// Audit configures the hash-chained audit log.
type Audit struct {
	Pos        Pos
	Path       string     `yaml:"path" doc:"The audit log file (JSON lines), relative to the workspace file's directory unless absolute."`
	Fsync      string     `yaml:"fsync" enum:"always,never" doc:"Whether every appended event is flushed to disk before the call goes on: always (durable) or never (faster, may lose the last events in a crash)."`
	SigningKey *SecretRef `yaml:"signing_key" doc:"An ed25519 private key (PEM, or raw 32 or 64 bytes) that signs checkpoint events, so that a chain rewritten from scratch is detected."`
	Arguments  string     `yaml:"arguments" enum:"off,redacted" doc:"What a decision event records of the call's arguments: off (the default: only args_sha256) or redacted (the arguments with every credential redacted, beside args_sha256)."`
}

// AuditArgumentsRedacted is the value of audit.arguments that records the
// redacted arguments in each decision event.
const AuditArgumentsRedacted = "redacted"

// Approvals configures how long a call waits for a human and how long an
// approval stays valid, plus declarative auto-approval rules.
type Approvals struct {
	Pos         Pos
	Wait        Duration        `yaml:"wait" doc:"How long a call that needs approval waits for a decision before it returns DENIED: approval pending <id>."`
	TTL         Duration        `yaml:"ttl" doc:"How long a granted approval stays valid for the identical call to be retried."`
	Elicitation bool            `yaml:"elicitation" doc:"Ask the agent's own client to approve (MCP elicitation) when it supports it, besides the operator."`
	Rules       []*ApprovalRule `yaml:"rules" doc:"Rules that approve cautious writes without a human; they never apply to strict."`
	// MaxPending: zero means DefaultMaxPending (see MaxPendingOrDefault).
	MaxPending Count  `yaml:"max_pending" doc:"How many approval requests one agent may have waiting at once, so that an agent cannot flood the operator."`
	Notify     Notify `yaml:"notify" doc:"Who is told when a call is held for approval."`
}

// Notify says who is told that a call waits for a human.
type Notify struct {
	Pos     Pos
	Webhook *Webhook `yaml:"webhook" doc:"POST a JSON event to a URL each time a call is held for approval (retried with backoff; the call never waits for it)."`
}

// Webhook is an HTTP endpoint told of each held call (a chat bridge, a
// pager). Header values are secrets read from the environment or a file.
type Webhook struct {
	Pos     Pos
	URL     string                `yaml:"url" schema:"required" doc:"The endpoint the event is POSTed to: an https URL (http only for loopback hosts)."`
	Headers map[string]*SecretRef `yaml:"headers" doc:"HTTP headers sent with each event, each value as {env: VARIABLE} or {file: PATH} (for example Authorization)."`
	// KeyPos records where each header was written, keyed "headers.<name>".
	KeyPos map[string]Pos
}

// ApprovalRule auto-approves cautious writes matching an agent, a capability
// and optional constraints. Rules never apply to strict.
type ApprovalRule struct {
	Pos              Pos
	Agent            string      `yaml:"agent" schema:"required" doc:"The agent whose calls the rule approves."`
	Capability       string      `yaml:"capability" schema:"required" doc:"The tool the rule approves, as tool:<surface>:<member>, or every tool of a surface as tool:<surface>:*."`
	ParamConstraints Constraints `yaml:"param_constraints" doc:"Bounds the call's arguments must meet for the rule to approve it."`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// SecretRef names where a secret comes from: an environment variable or a
// file. Inline secrets are refused at load so none ends up in version control.
type SecretRef struct {
	Pos  Pos
	Env  string `yaml:"env" doc:"The environment variable holding the secret."`
	File string `yaml:"file" doc:"The file holding the secret (a trailing newline is dropped)."`
}

// Credential is a named secret that pack env and server headers/env may
// reference as {credential.<name>}.
type Credential struct {
	SecretRef `yaml:",inline"`
	// Name is the map key it was declared under.
	Name string
}

// MCPServer is a downstream MCP server surface.
type MCPServer struct {
	Pos                 Pos
	ID                  string              `yaml:"id" schema:"required,id" doc:"The surface id: the server's tools are tool:<id>:<tool> and are served at /mcp/<id>."`
	Command             []string            `yaml:"command" doc:"The argv of a stdio server: the program, then its arguments. Give command or url, not both."`
	Env                 map[string]string   `yaml:"env" doc:"Environment variables of a stdio server; values may use {credential.<name>}."`
	Cwd                 string              `yaml:"cwd" doc:"The working directory of a stdio server, relative to the workspace file's directory unless absolute."`
	URL                 string              `yaml:"url" doc:"The endpoint of an HTTP server (streamable HTTP, or legacy SSE with transport: sse). Give command or url, not both."`
	Transport           string              `yaml:"transport" enum:"streamable-http,sse,stdio" doc:"How the server is reached: streamable-http (the default for url), sse (legacy HTTP+SSE) or stdio (the default for command)."`
	Headers             map[string]string   `yaml:"headers" doc:"HTTP headers sent to an HTTP server; values may use {credential.<name>}."`
	ProtocolVersion     string              `yaml:"protocol_version" doc:"Pins the MCP protocol version spoken to the server instead of negotiating it."`
	Description         string              `yaml:"description" doc:"What the server is for, for the people reading the workspace."`
	Permission          Tier                `yaml:"permission" doc:"The tier deciding the server's calls from their effects."`
	PermissionOverrides map[string]Tier     `yaml:"permission_overrides" doc:"A tier per tool name, overriding permission for that tool."`
	Effects             map[string]Effect   `yaml:"effects" doc:"What each tool does, by tool name: read or write. A tool not named here is a write."`
	TrustAnnotations    bool                `yaml:"trust_annotations" doc:"Count a tool the server marks readOnlyHint as a read when effects does not name it."`
	Scopes              []string            `yaml:"scopes" doc:"Scopes an agent must hold to call any tool of the server."`
	ScopeOverrides      map[string][]string `yaml:"scope_overrides" doc:"Scopes per tool name, replacing scopes for that tool."`
	Timeout             Duration            `yaml:"timeout" doc:"How long one call to the server may take."`
	TimeoutOverrides    map[string]Duration `yaml:"timeout_overrides" doc:"A timeout per tool name, overriding timeout for that tool."`
	MaxOutput           ByteSize            `yaml:"max_output" doc:"The largest result one call may return; a larger one is cut off and refused."`
	// KeyPos records where each map entry above was written, keyed
	// "<field>.<key>" (e.g. "effects.store"), for cross-check errors.
	KeyPos map[string]Pos
	// Damaged is set when loading reported an error inside this
	// declaration. A workspace with load errors serves only to find more
	// problems (toolgate check), and those checks skip what depends on a
	// damaged declaration, so that one mistake is reported once.
	Damaged bool `json:"-"`
}

// CommandPack is a set of local command-line programs served as MCP tools.
type CommandPack struct {
	Pos                 Pos
	ID                  string              `yaml:"id" schema:"id" doc:"The surface id: the pack's commands are tool:<id>:<command>. Required unless use names a bundled pack, whose id is the default."`
	Use                 string              `yaml:"use" doc:"bundled/<id> declares a pack shipped inside toolgate; its commands and requires come from the bundle and the other fields here override it."`
	Description         string              `yaml:"description" doc:"What the pack is for, for the people reading the workspace."`
	Permission          Tier                `yaml:"permission" doc:"The tier deciding the pack's calls from their effects."`
	PermissionOverrides map[string]Tier     `yaml:"permission_overrides" doc:"A tier per command id, overriding permission for that command."`
	Timeout             Duration            `yaml:"timeout" doc:"How long one command may run before it is killed."`
	TimeoutOverrides    map[string]Duration `yaml:"timeout_overrides" doc:"A timeout per command id, overriding timeout for that command."`
	MaxOutput           ByteSize            `yaml:"max_output" doc:"The most output one command may produce; a command past it is killed and its call refused."`
	// MaxMemory: zero means the consumer's built-in default.
	MaxMemory          ByteSize            `yaml:"max_memory" doc:"The memory each command may use."`
	MaxMemoryOverrides map[string]ByteSize `yaml:"max_memory_overrides" doc:"A memory bound per command id, overriding max_memory for that command."`
	Requires           []*Requirement      `yaml:"requires" doc:"Programs the pack needs on PATH, checked when the workspace loads."`
	CredentialsRef     []string            `yaml:"credentials_ref,one_or_list" doc:"The credentials the pack uses, by name: one name or a list."`
	Env                map[string]string   `yaml:"env" doc:"Environment variables of every command; values may use {credential.<name>}, the only place a pack sees a secret."`
	Cwd                string              `yaml:"cwd" doc:"The working directory of every command, relative to the workspace file's directory unless absolute."`
	Commands           []*Command          `yaml:"commands" doc:"The pack's commands, each one MCP tool."`
	// Bundled is true when the commands came from a bundled pack.
	Bundled bool
	KeyPos  map[string]Pos
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
	// UnreadCommands is set when a command of this pack could not be read
	// far enough to know its id (or its commands not at all), so that a
	// grant naming a command the pack lacks is not reported.
	UnreadCommands bool `json:"-"`
}

// Requirement is a binary a pack needs, with an optional semver constraint.
type Requirement struct {
	Pos         Pos
	Binary      string   `yaml:"binary" doc:"The program's name, looked up on PATH."`
	Version     string   `yaml:"version" doc:"A semantic-version constraint the program's version must meet, such as \">=2.20\"."`
	VersionArgs []string `yaml:"version_args" doc:"The arguments that make the program print its version."`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Command is one member of a pack: a frozen argv template with typed inputs.
type Command struct {
	Pos         Pos
	ID          string         `yaml:"id" schema:"required,id" doc:"The command's name: the tool is tool:<pack>:<id>."`
	Description string         `yaml:"description" doc:"What the command does, shown to the model as the tool's description."`
	Argv        []string       `yaml:"argv" schema:"required" doc:"The program and its arguments, run without a shell; an element may hold {param} placeholders filled from the call's arguments."`
	Inputs      map[string]any `yaml:"inputs" doc:"The JSON Schema (type: object) of the call's arguments; every argv placeholder is one of its properties."`
	Effects     Effect         `yaml:"effects" doc:"What the command does: read or write. A command without effects is a write."`
	Scopes      []string       `yaml:"scopes" doc:"Scopes an agent must hold to call the command."`
	Output      Output         `yaml:"output" doc:"How the command's stdout becomes the tool's result."`
	Cwd         string         `yaml:"cwd" doc:"The command's working directory, overriding the pack's cwd; relative to the workspace file's directory unless absolute."`
	Spread      []string       `yaml:"spread" doc:"Array parameters whose items each become one argv element; each must be a whole argv element \"{param}\"."`
	AllowDash   []string       `yaml:"allow_dash" doc:"Parameters whose values may start with \"-\"; any other value starting with \"-\" is refused so that it cannot be read as an option."`
	Background  bool           `yaml:"background" doc:"Run the command as a background job: the call returns a job id at once and the output is fetched later."`
	Program     []string       `yaml:"program" doc:"Parameters whose value is program text for an interpreter (a jq filter), which the runner confines so that the program cannot reach files the grant did not name."`
	Creates     []string       `yaml:"creates" doc:"Parameters naming a file the command writes: when a grant binds one with path_within and the file does not exist, the gateway creates it (mode 0644) in its directory beneath the root; its placeholder must be a whole argv element or stand last after literal text."`
	// ArgvPos, ProgramPos and CreatesPos record where each element of
	// Argv, Program and Creates was written.
	ArgvPos    []Pos
	ProgramPos []Pos
	CreatesPos []Pos
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Output says how a command's stdout becomes a tool result.
type Output struct {
	Pos     Pos
	Parse   string `yaml:"parse" enum:"text,json" doc:"text returns stdout as text content; json parses it and returns it as structuredContent."`
	WriteTo string `yaml:"write_to" doc:"A file, as an argv-style template, that stdout replaces atomically when the command exits 0: the safe in-place edit."`
}

// Agent is an identity that calls tools, with the grants that bound it.
type Agent struct {
	Pos    Pos
	ID     string     `yaml:"id" schema:"required,id" doc:"The agent's name, written in the audit of each of its calls."`
	Token  *SecretRef `yaml:"token" doc:"The agent's bearer token for the shared daemon, as {env: VARIABLE} or {file: PATH}."`
	Scopes []string   `yaml:"scopes" doc:"The scopes the agent holds; a tool that requires a scope the agent lacks is refused."`
	Grants []*Grant   `yaml:"grants" doc:"What the agent may call: capability strings, or objects adding argument bounds."`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Grant is one entry of an agent's grants: a capability string, optionally
// with argument bounds. A bare string in YAML is a Grant with only Op.
type Grant struct {
	Pos              Pos
	Op               string      `yaml:"op" schema:"required" doc:"The capability granted: tool:<surface>:<member>, pack:<id>, server:<id>, tool:<surface>:* or <pack>-<command>."`
	ParamConstraints Constraints `yaml:"param_constraints" doc:"Bounds on the call's arguments, per parameter; a call outside them is refused."`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Constraints are the argument bounds of a grant, keyed by parameter name,
// kept in the order written.
type Constraints []*Constraint

// Constraint bounds one parameter. Nil pointers mean "not constrained".
// Its YAML keys and their descriptions are constraintFields (values.go).
type Constraint struct {
	Pos        Pos
	Param      string
	Enum       []any
	Const      any
	HasConst   bool
	Pattern    string
	Minimum    *float64
	Maximum    *float64
	MaxLength  *int
	PathWithin string
}
