package bundled_test

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/toolgate/toolgate/bundled"
	"github.com/toolgate/toolgate/workspace"
)

func TestIDs(t *testing.T) {
	t.Parallel()
	ids := bundled.IDs()
	if !slices.Contains(ids, "json-tools") {
		t.Errorf("IDs() = %q, want json-tools among them", ids)
	}
	if !slices.IsSorted(ids) {
		t.Errorf("IDs() = %q, want them sorted", ids)
	}
	for _, id := range ids {
		if !workspace.IDPattern.MatchString(id) {
			t.Errorf("bundled id %q is not a valid surface id", id)
		}
	}
}

func TestSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id       string
		wantName string
		wantErr  bool
	}{
		{id: "json-tools", wantName: "bundled/packs/json-tools.yaml"},
		{id: "yaml-tools", wantErr: true},
		{id: "", wantErr: true},
		{id: "json-tools.yaml", wantErr: true},
		{id: "../bundled", wantErr: true},
		{id: "../packs/json-tools", wantErr: true},
		{id: "JSON-TOOLS", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			t.Parallel()
			name, data, err := bundled.Source(tt.id)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("Source(%q) = %q, want an error", tt.id, name)
				}
				if !strings.Contains(err.Error(), "bundled packs are: ") || !strings.Contains(err.Error(), "json-tools") {
					t.Errorf("error %q does not list the bundled packs", err)
				}
				return
			}
			if err != nil || name != tt.wantName || len(data) == 0 {
				t.Fatalf("Source(%q) = %q, %d bytes, %v; want %q", tt.id, name, len(data), err, tt.wantName)
			}
		})
	}
}

// TestPacksLoad declares every bundled pack in a workspace and checks it
// loads cleanly, under its own id, with each command described and its
// effects written out rather than left to the write default.
func TestPacksLoad(t *testing.T) {
	t.Parallel()
	for _, id := range bundled.IDs() {
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			ws, err := workspace.Parse("toolgate.yaml", []byte(packWorkspace(id)))
			if err != nil {
				t.Fatalf("use: bundled/%s does not load:\n%v", id, err)
			}
			p := ws.CommandPacks[0]
			if p.ID != id || !p.Bundled || p.Description == "" || len(p.Commands) == 0 {
				t.Errorf("pack = id %q bundled %v description %q, %d commands", p.ID, p.Bundled, p.Description, len(p.Commands))
			}
			for _, c := range p.Commands {
				if c.Description == "" {
					t.Errorf("command %s has no description; the model reads it to choose a tool", c.ID)
				}
				if c.Inputs["type"] != "object" {
					t.Errorf("command %s: inputs type = %v, want object", c.ID, c.Inputs["type"])
				}
			}
			_, data, err := bundled.Source(id)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				Commands []map[string]any `yaml:"commands"`
			}
			if err := yaml.Unmarshal(data, &raw); err != nil {
				t.Fatal(err)
			}
			for _, c := range raw.Commands {
				if e, ok := c["effects"]; !ok || (e != "read" && e != "write") {
					t.Errorf("command %v: effects = %v, want read or write written out", c["id"], e)
				}
			}
		})
	}
}

// TestJSONToolsEffects pins the read/write split of json-tools: pack grants
// give only read commands, so an edit must never be declared read.
func TestJSONToolsEffects(t *testing.T) {
	t.Parallel()
	ws, err := workspace.Parse("toolgate.yaml", []byte("version: 1\ncommand_packs: [{use: bundled/json-tools}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]workspace.Effect{}
	for _, c := range ws.CommandPacks[0].Commands {
		got[c.ID] = c.Effects
	}
	want := map[string]workspace.Effect{"query": "read", "keys": "read", "validate": "read", "edit-in-place": "write"}
	if len(got) != len(want) {
		t.Errorf("commands = %v, want %v", got, want)
	}
	for id, e := range want {
		if got[id] != e {
			t.Errorf("%s effects = %q, want %q", id, got[id], e)
		}
	}
}
