package harness

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
		if s.url != "" {
			out[s.name] = typedServer{Type: "http", URL: s.url, Headers: bearer(ref(s.tokenVar))}
			continue
		}
		out[s.name] = typedServer{Type: "stdio", Command: s.command, Args: s.args, Env: envRefs(s.envVars, ref)}
	}
	return marshal(map[string]any{key: out})
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
// ${VAR} are expanded in settings strings.
type geminiServer struct {
	Command      string            `json:"command,omitempty"`
	Args         []string          `json:"args,omitempty"`
	Env          map[string]string `json:"env,omitempty"`
	HTTPURL      string            `json:"httpUrl,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	IncludeTools []string          `json:"includeTools,omitempty"`
}

func geminiConfig(servers []server) ([]byte, error) {
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
	return marshal(map[string]any{"mcpServers": out})
}

// OpenCode: opencode.json, "mcp" with type local (command as one array,
// environment) or remote (url, headers), and enabled; {env:NAME} is
// substituted.
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
	for _, s := range servers {
		if s.url != "" {
			out[s.name] = opencodeServer{Type: "remote", URL: s.url, Headers: bearer("{env:" + s.tokenVar + "}"), Enabled: true}
			continue
		}
		out[s.name] = opencodeServer{Type: "local", Command: append([]string{s.command}, s.args...),
			Environment: envRefs(s.envVars, func(v string) string { return "{env:" + v + "}" }), Enabled: true}
	}
	return marshal(map[string]any{"$schema": "https://opencode.ai/config.json", "mcp": out})
}
