// Package harness connects agent harnesses (Claude Code, Codex, Cursor,
// Gemini CLI, VS Code, OpenCode, Qwen Code, GitHub Copilot CLI, Cline,
// Crush) to toolgate: it writes the MCP config each
// harness reads, derives the harness's own allowlist from an agent's grant,
// and reports parity between a deployed allowlist and the grant
// (docs/harnesses.md). Every mapping between allowlist entries and
// capabilities goes through grantcheck's one normalisation module.
package harness

import (
	"fmt"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// Harness names an agent harness whose config format toolgate writes.
type Harness string

// The harnesses toolgate knows.
const (
	Claude   Harness = "claude"
	Codex    Harness = "codex"
	Cursor   Harness = "cursor"
	Gemini   Harness = "gemini"
	VSCode   Harness = "vscode"
	OpenCode Harness = "opencode"
	Qwen     Harness = "qwen"
	Copilot  Harness = "copilot"
	Cline    Harness = "cline"
	Crush    Harness = "crush"
)

// Naming is how h spells an MCP tool to its model and in its allowlists.
func (h Harness) Naming() grantcheck.Naming {
	switch h {
	case Codex:
		return grantcheck.NamingCodex
	case Gemini, Crush:
		return grantcheck.NamingGemini
	case OpenCode:
		return grantcheck.NamingOpenCode
	}
	return grantcheck.NamingClaude
}

// Harnesses lists every known harness, in the order help texts show them.
func Harnesses() []Harness {
	return []Harness{Claude, Codex, Cursor, Gemini, VSCode, OpenCode, Qwen, Copilot, Cline, Crush}
}

// ParseHarness checks a harness name, saying which ones exist.
func ParseHarness(s string) (Harness, error) {
	for _, h := range Harnesses() {
		if string(h) == s {
			return h, nil
		}
	}
	return "", fmt.Errorf("unknown harness %q; use one of %s", s, harnessList())
}

func harnessList() string {
	names := make([]string, 0, len(Harnesses()))
	for _, h := range Harnesses() {
		names = append(names, string(h))
	}
	return strings.Join(names, ", ")
}
