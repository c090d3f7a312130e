package harness

import "github.com/toolgate/toolgate/grantcheck"

// GitHub Copilot CLI reads ~/.copilot/mcp-config.json (or a file given
// with --additional-mcp-config @FILE): "mcpServers" with type stdio and
// command/args/env, or type http with url/headers, ${VAR} expanded. Its
// allowlist is "tools" per server (the tools it offers the model; ["*"]
// for a server granted in bulk). deferTools "never" offers them up front
// rather than behind its tool search. The schema is the package's own
// (schemas/api.schema.json, McpServerConfigStdio and McpServerConfigHttp).
// Which calls run without asking is given on the command line
// (CopilotAllowTools).
type copilotServer struct {
	typedServer
	Tools      []string `json:"tools"`
	DeferTools string   `json:"deferTools"`
}

func copilotConfig(servers []server) ([]byte, error) {
	out := map[string]copilotServer{}
	for _, s := range servers {
		c := copilotServer{typedServer: typed(s, func(v string) string { return "${" + v + "}" }), Tools: s.tools, DeferTools: "never"}
		if c.Tools == nil {
			c.Tools = []string{"*"}
		}
		out[s.name] = c
	}
	return marshal(map[string]any{"mcpServers": out})
}

// CopilotAllowTools derives Copilot CLI's --allow-tool values from agent's
// grant: <server>(<tool>) per granted tool, <server> for a server granted
// in bulk. Headless (-p), Copilot runs a tool marked read-only without
// asking and refuses any other it would have to ask about, so without
// them a write would be refused by Copilot instead of held by toolgate.
func CopilotAllowTools(p *grantcheck.Policy, agent string) ([]string, error) {
	entries, err := Entries(p, agent)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.Tools == nil {
			out = append(out, e.Surface)
			continue
		}
		for _, t := range e.Tools {
			out = append(out, e.Surface+"("+t+")")
		}
	}
	return out, nil
}
