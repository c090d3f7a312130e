package pin

import (
	"encoding/json"
	"fmt"

	"github.com/toolgate/toolgate/workspace"
)

// PackDefinition is the MCP tool definition a pack command is pinned by:
// the workspace's own declaration (name, description, the input schema as
// written — before any grant narrows it for one agent — and the hints its
// effects give). The gateway pins its pack tools with this same function,
// so `toolgate pin` and the gateway always agree.
func PackDefinition(c *workspace.Command) (json.RawMessage, error) {
	inputs := any(map[string]any{"type": "object"})
	if c.Inputs != nil {
		inputs = c.Inputs
	}
	read := c.Effects == workspace.EffectRead
	def := map[string]any{
		"name":        c.ID,
		"description": c.Description,
		"inputSchema": inputs,
		"annotations": map[string]any{"readOnlyHint": read, "destructiveHint": !read},
	}
	b, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("command %s: %w", c.ID, err)
	}
	return b, nil
}

// PackTools pins every command of every pack in ws, by pack id.
func PackTools(ws *workspace.Workspace) (map[string][]Tool, error) {
	out := make(map[string][]Tool, len(ws.CommandPacks))
	for _, p := range ws.CommandPacks {
		tools := make([]Tool, 0, len(p.Commands))
		for _, c := range p.Commands {
			raw, err := PackDefinition(c)
			if err != nil {
				return nil, fmt.Errorf("pack %s: %w", p.ID, err)
			}
			t, err := DigestTool(raw)
			if err != nil {
				return nil, fmt.Errorf("pack %s: %w", p.ID, err)
			}
			tools = append(tools, t)
		}
		out[p.ID] = tools
	}
	return out, nil
}
