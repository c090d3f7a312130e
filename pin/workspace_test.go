package pin

import (
	"testing"

	"github.com/toolgate/toolgate/workspace"
)

// TestPackDefinition: a pack command's pinned definition is its
// declaration; editing what the model is shown changes the pin, and a
// command without inputs still has an object schema.
func TestPackDefinition(t *testing.T) {
	t.Parallel()
	cmd := &workspace.Command{ID: "list", Description: "List the notes.", Effects: workspace.EffectRead,
		Inputs: map[string]any{"type": "object", "properties": map[string]any{"dir": map[string]any{"type": "string", "maxLength": 64}}}}
	raw, err := PackDefinition(cmd)
	if err != nil {
		t.Fatal(err)
	}
	canon, name, err := CanonicalDefinition(raw)
	if err != nil || name != "list" {
		t.Fatal(name, err)
	}
	golden(t, "pack-definition.golden", append(canon, '\n'))

	ws := &workspace.Workspace{CommandPacks: []*workspace.CommandPack{{ID: "notes", Commands: []*workspace.Command{cmd, {ID: "bare"}}}}}
	before, err := PackTools(ws)
	if err != nil || len(before["notes"]) != 2 {
		t.Fatalf("%v %v", before, err)
	}
	bare, _ := PackDefinition(&workspace.Command{ID: "bare"})
	if c, _, _ := CanonicalDefinition(bare); string(c) != `{"annotations":{"destructiveHint":true,"readOnlyHint":false},"description":"","inputSchema":{"type":"object"},"name":"bare"}` {
		t.Fatalf("bare command: %s", c)
	}
	cmd.Effects = workspace.EffectWrite
	after, _ := PackTools(ws)
	if before["notes"][0].Digest == after["notes"][0].Digest {
		t.Fatal("changing effects (and so the hints) kept the pin")
	}
	if before["notes"][1].Digest != after["notes"][1].Digest {
		t.Fatal("an unchanged command's pin moved")
	}
}
