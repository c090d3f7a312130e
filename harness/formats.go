package harness

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/toolgate/toolgate/grantcheck"
)

// The JSON config formats, each as its harness documents it today.

// Claude Code (--mcp-config FILE or .mcp.json, top-level "mcpServers") and
// VS Code (.vscode/mcp.json, top-level "servers") share one entry shape,
// type stdio|http; they differ in the key and in how an environment
// variable is referenced: ${VAR} for Claude Code, ${env:VAR} for VS Code.
type typedServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func claudeConfig(servers []server) ([]byte, error) {
	return typedConfig(servers, "mcpServers", func(v string) string { return "${" + v + "}" })
}

func vscodeConfig(servers []server) ([]byte, error) {
	return typedConfig(servers, "servers", func(v string) string { return "${env:" + v + "}" })
}

func typedConfig(servers []server, key string, ref func(string) string) ([]byte, error) {
	out := map[string]typedServer{}
	for _, s := range servers {
		out[s.name] = typed(s, ref)
	}
	return marshal(map[string]any{key: out})
}

// typed is s as a type stdio|http entry, variables referenced with ref.
// Copilot CLI and Crush write the same entry with an allowlist added.
func typed(s server, ref func(string) string) typedServer {
	if s.url != "" {
		return typedServer{Type: "http", URL: s.url, Headers: bearer(ref(s.tokenVar))}
	}
	return typedServer{Type: "stdio", Command: s.command, Args: s.args, Env: envRefs(s.envVars, ref)}
}

func bearer(ref string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + ref}
}

// Cursor: .cursor/mcp.json, "mcpServers" with command/args/env or
// url/headers; ${env:NAME} is interpolated.
type cursorServer struct {
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

func cursorConfig(servers []server) ([]byte, error) {
	out := map[string]cursorServer{}
	for _, s := range servers {
		if s.url != "" {
			out[s.name] = cursorServer{URL: s.url, Headers: bearer("${env:" + s.tokenVar + "}")}
			continue
		}
		out[s.name] = cursorServer{Command: s.command, Args: s.args,
			Env: envRefs(s.envVars, func(v string) string { return "${env:" + v + "}" })}
	}
	return marshal(map[string]any{"mcpServers": out})
}

// Gemini CLI: settings.json, "mcpServers" with command/args/env or
// httpUrl/headers, and includeTools as the per-server allowlist; $VAR and
// ${VAR} are expanded in settings strings. Headless (-p), Gemini CLI
// offers the model only tools its policy allows without confirmation, so
// tools.allowed pre-approves exactly the granted tools (mcp_<server>_<tool>,
// mcp_<server>_* for a server granted in bulk): toolgate, not the harness,
// then holds what needs approval.
type geminiServer struct {
	Command      string            `json:"command,omitempty"`
	Args         []string          `json:"args,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	HTTPURL      string            `json:"httpUrl,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	IncludeTools []string          `json:"includeTools,omitempty"`
	// AlwaysLoadTools is Qwen Code's: declare the server's tools to the
	// model up front instead of behind its tool_search bridge.
	AlwaysLoadTools bool `json:"alwaysLoadTools,omitempty"`
}

func geminiConfig(servers []server) ([]byte, error) {
	allowed := []string{}
	for _, s := range servers {
		allowed = append(allowed, harnessNames(grantcheck.NamingGemini, s)...)
	}
	return marshal(map[string]any{"mcpServers": geminiServers(servers), "tools": map[string]any{"allowed": allowed}})
}

// geminiServers are the mcpServers entries of Gemini CLI and of its fork
// Qwen Code, which kept the format.
func geminiServers(servers []server) map[string]geminiServer {
	out := map[string]geminiServer{}
	for _, s := range servers {
		g := geminiServer{IncludeTools: s.tools}
		if s.url != "" {
			g.HTTPURL, g.Headers = s.url, bearer("${"+s.tokenVar+"}")
		} else {
			g.Command, g.Args = s.command, s.args
			g.Env = envRefs(s.envVars, func(v string) string { return "${" + v + "}" })
		}
		out[s.name] = g
	}
	return out
}

// harnessNames are the names naming n gives a server entry's tools: one
// per granted tool, or the whole-server pattern for a server granted in
// bulk.
func harnessNames(n grantcheck.Naming, s server) []string {
	if s.tools == nil {
		return []string{grantcheck.ToolName(n, s.name, "*")}
	}
	out := make([]string, 0, len(s.tools))
	for _, t := range s.tools {
		out = append(out, grantcheck.ToolName(n, s.name, t))
	}
	return out
}

// OpenCode: opencode.json, "mcp" with type local (command as one array,
// environment) or remote (url, headers), and enabled; {env:NAME} is
// substituted. Its "tools" map is the allowlist: OpenCode names a server's
// tool <server>_<tool>, reads the keys as globs, and the last key that
// matches a name decides, so every <server>_* false of a server granted
// tool by tool comes first, then <server>_* true for servers granted in
// bulk, then each granted <server>_<tool> true. MCP tools run without
// asking by default: toolgate holds what needs approval.
type opencodeServer struct {
	Type        string            `json:"type"`
	Command     []string          `json:"command,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	URL         string            `json:"url,omitempty"`
	Headers     map[string]string `json:"headers,omitempty"`
	Enabled     bool              `json:"enabled"`
}

func opencodeConfig(servers []server) ([]byte, error) {
	out := map[string]opencodeServer{}
	var off, bulk, on orderedBools
	for _, s := range servers {
		names := harnessNames(grantcheck.NamingOpenCode, s)
		if s.tools == nil {
			bulk = append(bulk, keyBool{names[0], true})
		} else {
			off = append(off, keyBool{grantcheck.ToolName(grantcheck.NamingOpenCode, s.name, "*"), false})
			for _, n := range names {
				on = append(on, keyBool{n, true})
			}
		}
		if s.url != "" {
			out[s.name] = opencodeServer{Type: "remote", URL: s.url, Headers: bearer("{env:" + s.tokenVar + "}"), Enabled: true}
			continue
		}
		out[s.name] = opencodeServer{Type: "local", Command: append([]string{s.command}, s.args...),
			Environment: envRefs(s.envVars, func(v string) string { return "{env:" + v + "}" }), Enabled: true}
	}
	tools := append(append(off, bulk...), on...)
	return marshal(map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": out, "tools": tools})
}

// keyBool is one entry of an ordered JSON object of booleans.
type keyBool struct {
	key string
	val bool
}

// orderedBools is a JSON object whose keys keep their order (a Go map's
// would be sorted), for allowlists where the last matching key wins.
type orderedBools []keyBool

// MarshalJSON writes the object in order.
func (o orderedBools) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv.key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.WriteString(strconv.FormatBool(kv.val))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
