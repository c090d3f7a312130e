package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"time"

	"github.com/toolgate/toolgate/approvals"
	"github.com/toolgate/toolgate/grantcheck"
	"github.com/toolgate/toolgate/workspace"
)

// Mode is how a harness reaches toolgate.
type Mode string

// The two modes: the harness launches one `toolgate serve --stdio` process
// per surface (identity fixed at launch), or it connects to the daemon's
// /mcp/<surface> endpoints with the agent's bearer token.
const (
	ModeStdio Mode = "stdio"
	ModeHTTP  Mode = "http"
)

// ConfigOptions say which agent, harness and mode a config is for.
type ConfigOptions struct {
	Harness   Harness
	Mode      Mode
	Agent     string
	Workspace *workspace.Workspace
	Policy    *grantcheck.Policy
	// WorkspacePath is the workspace file, made absolute so the harness can
	// launch toolgate from any directory.
	WorkspacePath string
	// Command is the toolgate executable a stdio entry launches.
	Command string
	// BaseURL overrides http://<gateway.listen> in http mode.
	BaseURL string
	// TokenVar, in http mode, names the environment variable the harness
	// reads the bearer token from, instead of the agent's token variable
	// (or, for an agent that presents OAuth access tokens only,
	// DefaultTokenVar).
	TokenVar string
}

// server is one harness entry, before it is written in a harness's format.
type server struct {
	name  string
	tools []string // nil: every tool of the surface
	// listed are the tools the workspace lists for the surface, known
	// also when it is granted in bulk.
	listed []string
	// stdio
	command string
	args    []string
	envVars []string // environment variables toolgate needs, forwarded by name
	// http
	url      string
	tokenVar string
}

// Config renders the MCP config o.Harness reads, one entry per surface the
// agent holds tools on, named after the surface. Tokens appear only as
// environment variable references in the harness's own syntax.
func Config(o ConfigOptions) ([]byte, error) {
	entries, err := Entries(o.Policy, o.Agent)
	if err != nil {
		return nil, err
	}
	if err := distinctNames(o, entries); err != nil {
		return nil, err
	}
	servers, err := servers(o, entries)
	if err != nil {
		return nil, err
	}
	switch o.Harness {
	case Claude:
		return claudeConfig(servers)
	case Codex:
		return codexConfig(servers, approvalWait(o.Workspace)), nil
	case Cursor:
		return cursorConfig(servers)
	case Gemini:
		return geminiConfig(servers)
	case VSCode:
		return vscodeConfig(servers)
	case OpenCode:
		return opencodeConfig(servers)
	case Qwen:
		return qwenConfig(servers)
	case Copilot:
		return copilotConfig(servers)
	case Cline:
		return clineConfig(servers)
	case Crush:
		return crushConfig(servers)
	}
	return nil, fmt.Errorf("unknown harness %q; use one of %s", o.Harness, harnessList())
}

func servers(o ConfigOptions, entries []Entry) ([]server, error) {
	var out []server
	switch o.Mode {
	case ModeStdio, "":
		wsPath, err := filepath.Abs(o.WorkspacePath)
		if err != nil {
			return nil, fmt.Errorf("workspace path %s: %w", o.WorkspacePath, err)
		}
		vars := credentialVars(o.Workspace)
		for _, e := range entries {
			out = append(out, server{name: e.Surface, tools: e.Tools, listed: listedTools(o, e.Surface), command: o.Command,
				args:    []string{"serve", "-w", wsPath, "--agent", o.Agent, "--stdio", "--surface", e.Surface},
				envVars: vars})
		}
	case ModeHTTP:
		tokenVar, err := TokenVar(o.Workspace, o.Agent, o.TokenVar)
		if err != nil {
			return nil, err
		}
		base := o.BaseURL
		if base == "" {
			base = "http://" + loopbackListen(o.Workspace.Gateway.Listen)
		}
		for _, e := range entries {
			out = append(out, server{name: e.Surface, tools: e.Tools, listed: listedTools(o, e.Surface), url: base + "/mcp/" + e.Surface, tokenVar: tokenVar})
		}
	default:
		return nil, fmt.Errorf("unknown mode %q; use stdio or http", o.Mode)
	}
	return out, nil
}

// listedTools names the tools the agent holds on surface as far as the
// workspace knows them.
func listedTools(o ConfigOptions, surface string) []string {
	var names []string
	for _, v := range o.Policy.Tools(o.Agent, surface) {
		names = append(names, v.Name)
	}
	return names
}

// distinctNames checks that o.Harness gives every tool of the agent its own
// name: Codex turns '-' into '_' (json-tools and json_tools become one
// namespace), Gemini CLI and OpenCode join server and tool with '_' (a +
// b_x and a_b + x become one name). Two tools under one name would make
// the harness's allowlist mean something else than the grant.
func distinctNames(o ConfigOptions, entries []Entry) error {
	n := o.Harness.Naming()
	seen := map[string]string{}
	claim := func(name, what string) error {
		if prev, dup := seen[name]; dup {
			return fmt.Errorf("%s and %s would both be named %q by %s; rename a surface or tool so that their names differ", prev, what, name, o.Harness)
		}
		seen[name] = what
		return nil
	}
	for _, e := range entries {
		if n == grantcheck.NamingCodex {
			if err := claim(grantcheck.ToolName(n, e.Surface, "*"), "surface "+e.Surface); err != nil {
				return err
			}
		}
		for _, v := range o.Policy.Tools(o.Agent, e.Surface) {
			if err := claim(grantcheck.ToolName(n, e.Surface, v.Name), "tool "+e.Surface+":"+v.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// approvalWait is how long toolgate holds a call before answering
// "approval pending": a harness must wait at least that long for a tool.
func approvalWait(ws *workspace.Workspace) time.Duration {
	if ws == nil {
		return approvals.DefaultWait
	}
	return ws.Gateway.Approvals.Wait.OrDefault(approvals.DefaultWait)
}

// credentialVars are the environment variables the workspace's credentials
// come from: a stdio toolgate resolves them at start, and some harnesses
// pass a launched server only the variables they are told to.
func credentialVars(ws *workspace.Workspace) []string {
	var vars []string
	for _, c := range ws.Credentials {
		if c != nil && c.Env != "" {
			vars = append(vars, c.Env)
		}
	}
	sort.Strings(vars)
	return vars
}

// TokenVar is the environment variable a harness reads agent's bearer
// token from: override when given; else the agent's token: {env: VAR};
// else, when the workspace accepts OAuth access tokens
// (gateway.identity.jwt), DefaultTokenVar(agent), where the access token
// is to be put.
func TokenVar(ws *workspace.Workspace, agent, override string) (string, error) {
	if override != "" {
		if !envVarRE.MatchString(override) {
			return "", fmt.Errorf("--token-env %q: an environment variable name is letters, digits and '_', not starting with a digit", override)
		}
		return override, nil
	}
	jwt := ws.Gateway.Identity.JWT != nil
	for _, a := range ws.Agents {
		if a.ID != agent {
			continue
		}
		switch {
		case a.Token != nil && a.Token.Env != "":
			return a.Token.Env, nil
		case jwt:
			return DefaultTokenVar(agent), nil
		case a.Token == nil:
			return "", fmt.Errorf("agent %q has no token, so it cannot connect to the daemon over HTTP; declare token: {env: VAR} for it, accept OAuth access tokens (gateway.identity.jwt), or use --mode stdio", agent)
		}
		return "", fmt.Errorf("agent %q reads its token from a file, and harness configs reference tokens only through environment variables (toolgate never prints a token); declare token: {env: VAR}, pass --token-env VAR, or use --mode stdio", agent)
	}
	return "", fmt.Errorf("no agent %q is declared", agent)
}

// loopbackListen turns gateway.listen into an address a local harness can
// dial: the default when unset, and 127.0.0.1 for an unspecified host.
func loopbackListen(listen string) string {
	if listen == "" {
		return "127.0.0.1:7330"
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// envRefs maps each variable to a reference in a harness's syntax.
func envRefs(vars []string, ref func(string) string) map[string]string {
	if len(vars) == 0 {
		return nil
	}
	m := make(map[string]string, len(vars))
	for _, v := range vars {
		m[v] = ref(v)
	}
	return m
}

// marshal writes indented JSON without HTML escaping and with a final
// newline, the way people keep these files.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
