package harness

import (
	"fmt"
	"strings"
	"time"
)

// Codex reads ~/.codex/config.toml (or a trusted project's
// .codex/config.toml): one [mcp_servers.<id>] table per server, command and
// args or url with bearer_token_env_var, env_vars naming variables to pass
// through to a launched server, and enabled_tools as its allowlist. Codex
// itself asks before every MCP call not marked read-only, and refuses it
// when it cannot ask (codex exec): default_tools_approval_mode = "approve"
// lets the granted tools through to toolgate, which holds what needs
// approval. Codex gives up on a tool after tool_timeout_sec (60 by
// default), so a longer approvals.wait raises it: the harness then hears
// toolgate's "approval pending" instead of a timeout of its own.
func codexConfig(servers []server, wait time.Duration) []byte {
	var b strings.Builder
	for i, s := range servers {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[mcp_servers.%s]\n", tomlKey(s.name))
		if s.url != "" {
			fmt.Fprintf(&b, "url = %s\nbearer_token_env_var = %s\n", tomlString(s.url), tomlString(s.tokenVar))
		} else {
			fmt.Fprintf(&b, "command = %s\nargs = %s\n", tomlString(s.command), tomlArray(s.args))
			if len(s.envVars) > 0 {
				fmt.Fprintf(&b, "env_vars = %s\n", tomlArray(s.envVars))
			}
		}
		b.WriteString("default_tools_approval_mode = \"approve\"\n")
		if wait+codexTimeoutMargin > codexToolTimeout {
			fmt.Fprintf(&b, "tool_timeout_sec = %d\n", int((wait+codexTimeoutMargin+time.Second-1)/time.Second))
		}
		if s.tools != nil {
			fmt.Fprintf(&b, "enabled_tools = %s\n", tomlArray(s.tools))
		}
	}
	return []byte(b.String())
}

// codexToolTimeout is Codex's default tool_timeout_sec; the margin covers
// the command's own run after the approval wait.
const (
	codexToolTimeout   = 60 * time.Second
	codexTimeoutMargin = 30 * time.Second
)
