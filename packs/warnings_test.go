package packs

import (
	"strings"
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

func TestCredentialProgramWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, yaml string
		want       []string // substrings, one per warning
	}{
		{"credential beside program text", `version: 1
credentials:
  tok: {env: TOK}
command_packs:
  - use: bundled/json-tools
    env:
      SECRET: "{credential.tok}"
`, []string{
			`toolgate.yaml:7:7: warning: command json-tools:edit-in-place takes agent-written program text (program: filter, declared at bundled/packs/json-tools.yaml:`,
			`toolgate.yaml:7:7: warning: command json-tools:query takes agent-written program text`}},
		{"credential, no program text", `version: 1
credentials:
  gh-token: {env: GH}
command_packs:
  - use: bundled/gh
`, nil},
		{"program text, no credential", `version: 1
command_packs:
  - use: bundled/json-tools
`, nil},
	}
	for _, tt := range tests {
		ws, err := workspace.Parse("toolgate.yaml", []byte(tt.yaml))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got := CredentialProgramWarnings(ws)
		if len(got) != len(tt.want) {
			t.Fatalf("%s: %d warnings, want %d: %v", tt.name, len(got), len(tt.want), got)
		}
		var lines []string
		for _, w := range got {
			lines = append(lines, w.String())
		}
		text := strings.Join(lines, "\n")
		for _, w := range tt.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: warnings lack %q:\n%s", tt.name, w, text)
			}
		}
		if tt.want != nil && !strings.Contains(text, `credential "tok"`) || tt.want != nil && !strings.Contains(text, "move the credential") {
			t.Errorf("%s: the warning does not say which credential or how to fix:\n%s", tt.name, text)
		}
	}
}
