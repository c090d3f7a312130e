package harness

import (
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// codexFile is what toolgate reads of a Codex config.toml: its MCP
// servers. The whole file must be TOML (Codex reads nothing of a file it
// cannot parse); settings outside mcp_servers are Codex's own and not
// checked here.
type codexFile struct {
	MCPServers map[string]codexServer `toml:"mcp_servers"`
}

// codexServer is one [mcp_servers.<id>] table, each field of the type
// Codex gives it: a value of another type makes Codex refuse the file.
// Pointers tell a field that is absent from one set empty, since Codex
// refuses some fields on one transport even when empty.
type codexServer struct {
	// stdio
	Command *string            `toml:"command"`
	Args    *[]string          `toml:"args"`
	Env     *map[string]string `toml:"env"`
	EnvVars *[]any             `toml:"env_vars"` // a name, or a table with a name
	Cwd     *string            `toml:"cwd"`
	// streamable HTTP
	URL               *string            `toml:"url"`
	BearerTokenEnvVar *string            `toml:"bearer_token_env_var"`
	HTTPHeaders       *map[string]string `toml:"http_headers"`
	EnvHTTPHeaders    *map[string]string `toml:"env_http_headers"`
	BearerToken       *string            `toml:"bearer_token"` // refused on both: a secret does not belong in the file

	Enabled           *bool     `toml:"enabled"`
	Required          *bool     `toml:"required"`
	EnabledTools      *[]string `toml:"enabled_tools"`
	DisabledTools     []string  `toml:"disabled_tools"`
	ApprovalMode      *string   `toml:"default_tools_approval_mode"`
	ToolTimeoutSec    *float64  `toml:"tool_timeout_sec"`
	StartupTimeoutSec *float64  `toml:"startup_timeout_sec"`
	Tools             map[string]struct {
		ApprovalMode *string `toml:"approval_mode"`
	} `toml:"tools"`
}

// codexApprovalModes are the values Codex takes for an approval mode.
var codexApprovalModes = []string{"auto", "prompt", "writes", "approve"}

// readCodexConfig decodes a Codex config.toml and refuses what Codex
// refuses in its MCP servers: TOML errors, values of the wrong type, a
// server with neither or both of command and url, a field of the other
// transport, an unknown approval mode, a negative or non-finite timeout.
// Each refusal names the file and line.
func readCodexConfig(path string, data []byte) (codexFile, error) {
	var doc codexFile
	if err := decodeTOML(path, data, &doc); err != nil {
		return codexFile{}, err
	}
	for _, id := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		if err := checkCodexServer(path, data, id, doc.MCPServers[id]); err != nil {
			return codexFile{}, err
		}
	}
	return doc, nil
}

func checkCodexServer(path string, data []byte, id string, s codexServer) error {
	at := func(key []string, format string, args ...any) error {
		return tomlErrorAt(path, data, append([]string{"mcp_servers", id}, key...), format, args...)
	}
	type field struct {
		name string
		set  bool
	}
	var transport string
	var foreign []field
	switch {
	case s.Command != nil && s.URL != nil:
		return at(nil, "both command and url: a server is launched (command) or reached over HTTP (url), not both")
	case s.Command != nil:
		transport = "stdio (command)"
		foreign = []field{{"bearer_token_env_var", s.BearerTokenEnvVar != nil}, {"http_headers", s.HTTPHeaders != nil}, {"env_http_headers", s.EnvHTTPHeaders != nil}}
	case s.URL != nil:
		transport = "streamable HTTP (url)"
		foreign = []field{{"args", s.Args != nil}, {"env", s.Env != nil}, {"env_vars", s.EnvVars != nil}, {"cwd", s.Cwd != nil}}
	default:
		return at(nil, "neither command nor url: give command (and args) to launch the server, or url to reach it")
	}
	foreign = append(foreign, field{"bearer_token", s.BearerToken != nil})
	for _, f := range foreign {
		if f.set {
			if f.name == "bearer_token" {
				return at([]string{f.name}, "Codex takes no token in the file: put it in an environment variable and name it in bearer_token_env_var")
			}
			return at([]string{f.name}, "not supported for a %s server; remove it", transport)
		}
	}
	if s.EnvVars != nil {
		for _, v := range *s.EnvVars {
			t, isTable := v.(map[string]any)
			if _, isName := v.(string); !isName && !(isTable && isString(t["name"])) {
				return at([]string{"env_vars"}, "each entry is a variable's name or a table with a name, not %v", v)
			}
		}
	}
	if s.ApprovalMode != nil && !slices.Contains(codexApprovalModes, *s.ApprovalMode) {
		return at([]string{"default_tools_approval_mode"}, "%q: use one of %s", *s.ApprovalMode, strings.Join(codexApprovalModes, ", "))
	}
	for _, tool := range slices.Sorted(maps.Keys(s.Tools)) {
		if m := s.Tools[tool].ApprovalMode; m != nil && !slices.Contains(codexApprovalModes, *m) {
			return at([]string{"tools", tool, "approval_mode"}, "%q: use one of %s", *m, strings.Join(codexApprovalModes, ", "))
		}
	}
	for _, f := range []struct {
		name string
		v    *float64
	}{{"tool_timeout_sec", s.ToolTimeoutSec}, {"startup_timeout_sec", s.StartupTimeoutSec}} {
		if f.v != nil && (math.IsNaN(*f.v) || *f.v < 0 || *f.v >= math.MaxUint64) {
			return at([]string{f.name}, "%v: seconds, zero or more", *f.v)
		}
	}
	return nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// codexConfigTOML reads mcp_servers.<id> of a Codex config.toml: its
// enabled_tools (every tool when absent) less its disabled_tools; a server
// with enabled = false offers none. A file Codex would refuse is an error.
func codexConfigTOML(path string, known grantcheck.Known) (source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return source{}, fmt.Errorf("read %s: %w", path, err)
	}
	doc, err := readCodexConfig(path, data)
	if err != nil {
		return source{}, fmt.Errorf("%w (Codex refuses this file too)", err)
	}
	var src source
	var asking []string
	for _, id := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		s := doc.MCPServers[id]
		if s.Enabled != nil && !*s.Enabled {
			continue
		}
		tools := s.EnabledTools
		if len(s.DisabledTools) > 0 {
			if tools == nil && known[id] != nil {
				all := append([]string(nil), known[id]...)
				tools = &all
			}
			if tools == nil {
				src.problems = append(src.problems, fmt.Sprintf("%s: disabled_tools (%s) on a server whose tools are not known: what it leaves cannot be compared; list enabled_tools instead", id, strings.Join(s.DisabledTools, ", ")))
			} else {
				kept := []string{}
				for _, name := range *tools {
					if !slices.Contains(s.DisabledTools, name) {
						kept = append(kept, name)
					}
				}
				tools = &kept
			}
		}
		// Codex's own spelling of the names is lossy ('-' → '_'); the config
		// holds them unchanged, and the Codex naming reads those too.
		src.entries = append(src.entries, serverEntries(grantcheck.NamingClaude, id, tools)...)
		if s.ApprovalMode == nil || *s.ApprovalMode != "approve" {
			asking = append(asking, id)
		}
	}
	if len(asking) > 0 {
		src.notes = append(src.notes, fmt.Sprintf("%s: without default_tools_approval_mode = \"approve\" Codex asks before each call not marked read-only, and codex exec refuses it", strings.Join(asking, ", ")))
	}
	return src, nil
}
