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

// Tier is a permission tier of DESIGN.md §5. The zero value means "not
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

// Workspace is one loaded toolgate.yaml with its bundled packs expanded.
type Workspace struct {
	// Path is the file the workspace was loaded from.
	Path string
	// Revision is the SHA-256 (hex) of the file's bytes; approvals are bound
	// to it so that an edited workspace invalidates pending approvals.
	Revision string

	Version      int                    `yaml:"version"`
	Gateway      Gateway                `yaml:"gateway"`
	Credentials  map[string]*Credential `yaml:"credentials"`
	MCPServers   []*MCPServer           `yaml:"mcp_servers"`
	CommandPacks []*CommandPack         `yaml:"command_packs"`
	Agents       []*Agent               `yaml:"agents"`

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

// Gateway configures the daemon itself.
type Gateway struct {
	Pos            Pos
	Listen         string     `yaml:"listen"`
	Audit          Audit      `yaml:"audit"`
	Approvals      Approvals  `yaml:"approvals"`
	AdminToken     *SecretRef `yaml:"admin_token"`
	MaxBodyBytes   ByteSize   `yaml:"max_body"`
	AllowedOrigins []string   `yaml:"allowed_origins"`
	// State is where approvals, tasks and jobs live (DESIGN §11); the zero
	// value is the embedded store in StateDir.
	State State `yaml:"state"`
	// Sessions bounds the MCP sessions each agent may hold open.
	Sessions Sessions `yaml:"sessions"`
	// BodyTimeout is the read deadline for a whole HTTP request body, so a
	// slow client cannot hold a connection open; zero means
	// DefaultBodyTimeout (see BodyTimeoutOrDefault).
	BodyTimeout Duration `yaml:"body_timeout"`
	// Identity declares ways agents authenticate besides bearer tokens.
	Identity Identity `yaml:"identity"`
	// Metrics configures the Prometheus endpoint.
	Metrics Metrics `yaml:"metrics"`
}

// Audit configures the hash-chained audit log.
type Audit struct {
	Pos Pos
	// Path is relative to the workspace file's directory unless absolute.
	Path string `yaml:"path"`
	// Fsync is "always" (default) or "never".
	Fsync string `yaml:"fsync"`
	// SigningKey, when set, is an ed25519 private key (PEM, or raw 32 or 64
	// bytes: consumers parse it) that signs checkpoint events, so a chain
	// rewritten from scratch is detected (DESIGN §7). Never inline.
	SigningKey *SecretRef `yaml:"signing_key"`
}

// Approvals configures how long a call waits for a human and how long an
// approval stays valid, plus declarative auto-approval rules.
type Approvals struct {
	Pos         Pos
	Wait        Duration        `yaml:"wait"`
	TTL         Duration        `yaml:"ttl"`
	Elicitation bool            `yaml:"elicitation"`
	Rules       []*ApprovalRule `yaml:"rules"`
	// MaxPending caps the approval requests one agent may have waiting, so
	// an agent cannot flood the operator; zero means DefaultMaxPending (see
	// MaxPendingOrDefault).
	MaxPending Count `yaml:"max_pending"`
}

// ApprovalRule auto-approves cautious writes matching an agent, a capability
// and optional constraints. Rules never apply to strict.
type ApprovalRule struct {
	Pos              Pos
	Agent            string      `yaml:"agent"`
	Capability       string      `yaml:"capability"`
	ParamConstraints Constraints `yaml:"param_constraints"`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// SecretRef names where a secret comes from: an environment variable or a
// file. Inline secrets are refused at load so none ends up in version control.
type SecretRef struct {
	Pos  Pos
	Env  string `yaml:"env"`
	File string `yaml:"file"`
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
	Pos Pos
	ID  string `yaml:"id"`
	// Command is the argv of a stdio server.
	Command []string          `yaml:"command"`
	Env     map[string]string `yaml:"env"`
	Cwd     string            `yaml:"cwd"`
	// URL is a streamable HTTP (or, with Transport "sse", legacy SSE) endpoint.
	URL       string            `yaml:"url"`
	Transport string            `yaml:"transport"`
	Headers   map[string]string `yaml:"headers"`
	// ProtocolVersion pins the MCP protocol version spoken downstream.
	ProtocolVersion     string              `yaml:"protocol_version"`
	Description         string              `yaml:"description"`
	Permission          Tier                `yaml:"permission"`
	PermissionOverrides map[string]Tier     `yaml:"permission_overrides"`
	Effects             map[string]Effect   `yaml:"effects"`
	TrustAnnotations    bool                `yaml:"trust_annotations"`
	Scopes              []string            `yaml:"scopes"`
	ScopeOverrides      map[string][]string `yaml:"scope_overrides"`
	Timeout             Duration            `yaml:"timeout"`
	TimeoutOverrides    map[string]Duration `yaml:"timeout_overrides"`
	MaxOutput           ByteSize            `yaml:"max_output"`
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
	Pos Pos
	ID  string `yaml:"id"`
	// Use is "bundled/<id>" for a pack shipped inside the binary. Its
	// commands come from the bundle; the other fields here override it.
	Use                 string              `yaml:"use"`
	Description         string              `yaml:"description"`
	Permission          Tier                `yaml:"permission"`
	PermissionOverrides map[string]Tier     `yaml:"permission_overrides"`
	Timeout             Duration            `yaml:"timeout"`
	TimeoutOverrides    map[string]Duration `yaml:"timeout_overrides"`
	MaxOutput           ByteSize            `yaml:"max_output"`
	// MaxMemory bounds each command's memory; zero means the consumer's
	// built-in default. MaxMemoryOverrides sets it per command id.
	MaxMemory          ByteSize            `yaml:"max_memory"`
	MaxMemoryOverrides map[string]ByteSize `yaml:"max_memory_overrides"`
	Requires           []*Requirement      `yaml:"requires"`
	CredentialsRef     []string            `yaml:"credentials_ref,one_or_list"`
	Env                map[string]string   `yaml:"env"`
	Cwd                string              `yaml:"cwd"`
	Commands           []*Command          `yaml:"commands"`
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
	Pos     Pos
	Binary  string `yaml:"binary"`
	Version string `yaml:"version"`
	// VersionArgs are the arguments that make the binary print its version;
	// default ["--version"].
	VersionArgs []string `yaml:"version_args"`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Command is one member of a pack: a frozen argv template with typed inputs.
type Command struct {
	Pos         Pos
	ID          string   `yaml:"id"`
	Description string   `yaml:"description"`
	Argv        []string `yaml:"argv"`
	// Inputs is the JSON Schema of the arguments, as written.
	Inputs  map[string]any `yaml:"inputs"`
	Effects Effect         `yaml:"effects"`
	Scopes  []string       `yaml:"scopes"`
	Output  Output         `yaml:"output"`
	Cwd     string         `yaml:"cwd"`
	// Spread names array parameters whose items each become one argv element.
	Spread []string `yaml:"spread"`
	// AllowDash names parameters whose values may start with "-".
	AllowDash  []string `yaml:"allow_dash"`
	Background bool     `yaml:"background"`
	// Program names parameters whose value is program text for an
	// interpreter (a jq filter), which the runner must confine so that the
	// program cannot reach files the grant did not name (DESIGN §6).
	Program []string `yaml:"program"`
	// Creates names parameters that name a file the command writes, which
	// the gateway creates (empty, mode 0644) when a grant binds the
	// parameter with path_within and the file does not exist yet; any
	// other bound parameter must name an existing file.
	Creates []string `yaml:"creates"`
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
	Pos Pos
	// Parse is "" or "text" (text content) or "json" (structuredContent).
	Parse string `yaml:"parse"`
	// WriteTo is an argv-style template naming a file that stdout replaces
	// atomically (temp file in the same directory, then rename) when the
	// command exits 0: the safe in-place edit.
	WriteTo string `yaml:"write_to"`
}

// Agent is an identity that calls tools, with the grants that bound it.
type Agent struct {
	Pos    Pos
	ID     string     `yaml:"id"`
	Token  *SecretRef `yaml:"token"`
	Scopes []string   `yaml:"scopes"`
	Grants []*Grant   `yaml:"grants"`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Grant is one entry of an agent's grants: a capability string, optionally
// with argument bounds. A bare string in YAML is a Grant with only Op.
type Grant struct {
	Pos              Pos
	Op               string      `yaml:"op"`
	ParamConstraints Constraints `yaml:"param_constraints"`
	// Damaged is set when loading reported an error inside this
	// declaration (see MCPServer.Damaged).
	Damaged bool `json:"-"`
}

// Constraints are the argument bounds of a grant, keyed by parameter name,
// kept in the order written.
type Constraints []*Constraint

// Constraint bounds one parameter. Nil pointers mean "not constrained".
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
