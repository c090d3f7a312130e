package grantcheck

import (
	"github.com/toolgate/toolgate/tiers"
	"github.com/toolgate/toolgate/workspace"
)

// Outcome is the verdict of a decision; the one definition lives in tiers.
type Outcome = tiers.Outcome

// The three outcomes, re-exported so callers of Decide need not import tiers.
const (
	Allow    = tiers.Allow
	Approval = tiers.Approval
	Deny     = tiers.Deny
)

// SurfaceKind says what serves a surface's members.
type SurfaceKind string

// The two kinds of surface.
const (
	KindPackSurface SurfaceKind = "pack"
	KindMCPSurface  SurfaceKind = "mcp"
)

// Policy is a workspace's grants compiled into per-agent indexes, with every
// member's effects, tier, scopes and input schema resolved. It is immutable:
// WithServerTools returns a new Policy, so a gateway can swap policies
// atomically while calls are being decided.
type Policy struct {
	wsDir      string
	surfaces   map[string]*surface
	order      []string
	agents     map[string]*agent
	agentOrder []string
}

// surface is one MCP server or command pack.
type surface struct {
	id     string
	kind   SurfaceKind
	pack   *workspace.CommandPack
	server *workspace.MCPServer
	// members are a pack's commands, or a server's tools: those listed by
	// WithServerTools, else the ones the workspace names (effects,
	// permission_overrides, scope_overrides, exact grants).
	members map[string]*member
	order   []string
	// listed is true for packs, and for servers once their tools were
	// enumerated; a server: bulk grant denies until then.
	listed bool
}

// member is one tool or command with everything a decision needs.
type member struct {
	name        string
	description string
	effects     workspace.Effect
	tier        workspace.Tier
	tierReason  string
	scopes      []string
	// schema is nil when the input schema is unknown (a server tool never
	// listed): validation is skipped and the workspace's declarations decide.
	schema *inputSchema
	// schemaErr is set when a listed tool's schema does not compile; calls
	// to it are refused at the schema step.
	schemaErr error
	// baseDir resolves relative path_within arguments.
	baseDir string
	// structured: a pack command with output: {parse: json}, whose results
	// carry structuredContent.
	structured bool
}

// agent is one identity's compiled grants.
type agent struct {
	id        string
	scopes    map[string]bool
	scopeList []string
	grants    []*grant
	exact     map[toolKey]*grant
	bulk      map[string]*grant
}

type toolKey struct{ surface, member string }

// grant is one compiled grant entry of an agent.
type grant struct {
	text string
	pos  workspace.Pos
	// cap is the resolved capability: an alias becomes KindTool, pack: and
	// server: keep their kind, tool:<s>:* becomes the bulk kind of s.
	cap         Capability
	constraints []*constraint
}

// bulk reports whether the grant covers more than one named tool.
func (g *grant) bulk() bool { return g.cap.Kind != KindTool }

// tierReasons spell out the tier table once per cell, so that the allow
// path of Decide never formats a string.
func tierReason(t workspace.Tier, e workspace.Effect) string {
	o := tiers.OutcomeFor(t, e)
	if e != workspace.EffectRead {
		e = workspace.EffectWrite
	}
	switch o {
	case Allow:
		return string(t) + " tier: " + string(e) + " allowed"
	case Approval:
		return string(t) + " tier: " + string(e) + " needs approval"
	}
	if t == workspace.TierReadonly {
		return "readonly tier: write refused"
	}
	return "unknown tier " + string(t) + ": refused"
}

func newMember(name, description string, e workspace.Effect, t workspace.Tier, scopes []string, baseDir string) *member {
	if e != workspace.EffectRead {
		e = workspace.EffectWrite
	}
	return &member{name: name, description: description, effects: e, tier: t, tierReason: tierReason(t, e), scopes: scopes, baseDir: baseDir}
}

// Agents lists the declared agent ids in workspace order.
func (p *Policy) Agents() []string { return append([]string(nil), p.agentOrder...) }

// Surfaces lists the surface ids in workspace order (servers, then packs).
func (p *Policy) Surfaces() []string { return append([]string(nil), p.order...) }
