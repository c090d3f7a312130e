package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What mcp-config writes, read back by parity, is green: the derived
// allowlists and the grant cannot drift apart.
func TestConfigParityRoundTrip(t *testing.T) {
	t.Parallel()
	ws, p := load(t, "testdata/toolgate.yaml")
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	list, err := AllowedTools(p, "reader")
	if err != nil {
		t.Fatal(err)
	}
	settings, err := ClaudeSettings(list)
	if err != nil {
		t.Fatal(err)
	}
	rows := []*SpecRow{
		{Agent: "reader", Provider: Claude, HasAllowedTools: true, AllowedTools: list},
		{Agent: "reader", Provider: Claude, Settings: write("settings.json", settings)},
	}
	for _, h := range []Harness{Codex, Gemini, OpenCode, Qwen, Copilot, Crush} {
		for _, mode := range []Mode{ModeStdio, ModeHTTP} {
			cfg, err := Config(ConfigOptions{Harness: h, Mode: mode, Agent: "reader", Workspace: ws, Policy: p,
				WorkspacePath: "/w/toolgate.yaml", Command: "toolgate"})
			if err != nil {
				t.Fatal(err)
			}
			r := &SpecRow{Agent: "reader", Provider: h}
			name := string(h) + "-" + string(mode)
			if h == Codex {
				r.ConfigTOML = write(name+".toml", cfg)
			} else {
				r.Settings = write(name+".json", cfg)
			}
			rows = append(rows, r)
		}
	}
	rep := Check(p, &Spec{Rows: rows})
	for _, r := range rep.Rows {
		if r.Verdict != Green {
			t.Errorf("%s/%s: %s: %s", r.Agent, r.Provider, r.Verdict, r.Note)
		}
		// What mcp-config writes runs headless as it is: nothing left for
		// the harness to ask about.
		if strings.Contains(r.Note, "asks") || strings.Contains(r.Note, "pre-approves") {
			t.Errorf("%s/%s: %s", r.Agent, r.Provider, r.Note)
		}
	}
}
