package grantcheck

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
)

// ToolInfo is one tool as an MCP server lists it (tools/list).
type ToolInfo struct {
	Name        string
	Description string
	// InputSchema is the tool's inputSchema; empty means "an object with
	// any properties".
	InputSchema json.RawMessage
	// ReadOnlyHint is annotations.readOnlyHint; it counts only when the
	// server is declared with trust_annotations: true.
	ReadOnlyHint *bool
}

// ParseToolInfo reads one tool of a tools/list result (name, description,
// input schema, readOnlyHint): the gateway reads a live listing with it and
// the offline commands read toolgate.lock's definitions with it, so a tool
// is judged alike from either. False when raw is not an object with a name.
func ParseToolInfo(raw json.RawMessage) (ToolInfo, bool) {
	var t struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
		Annotations struct {
			ReadOnlyHint *bool `json:"readOnlyHint"`
		} `json:"annotations"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Name == "" {
		return ToolInfo{}, false
	}
	return ToolInfo{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, ReadOnlyHint: t.Annotations.ReadOnlyHint}, true
}

// ToolInfos reads a listing as the gateway keeps it: each tool once (the
// first of a repeated name), what is not a tool left out.
func ToolInfos(raws []json.RawMessage) []ToolInfo {
	out := make([]ToolInfo, 0, len(raws))
	seen := make(map[string]bool, len(raws))
	for _, raw := range raws {
		t, ok := ParseToolInfo(raw)
		if !ok || seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	return out
}

// WithServerTools returns a new Policy in which server's tools are the ones
// listed: server: and tool:<server>:* grants now cover them, exact grants of
// tools the server no longer lists deny, and arguments are validated against
// each tool's input schema. p itself is unchanged. A tool whose schema does
// not compile is kept and refused at the schema step with the reason. The
// error reports an unknown server, a pack id, or a listing with duplicate
// or unaddressable names (letters, digits, '_', '.', '-').
func (p *Policy) WithServerTools(server string, tools []ToolInfo) (*Policy, error) {
	old := p.surfaces[server]
	if old == nil {
		return nil, fmt.Errorf("WithServerTools: no MCP server %q is declared", server)
	}
	if old.kind != KindMCPSurface {
		return nil, fmt.Errorf("WithServerTools: %q is a command pack, not an MCP server", server)
	}
	s := &surface{id: old.id, kind: old.kind, server: old.server, members: make(map[string]*member, len(tools)), listed: true}
	dir := baseDir(p.wsDir, old.server.Cwd)
	var errs []error
	for _, t := range tools {
		if !ValidName(t.Name) {
			errs = append(errs, fmt.Errorf("server %q lists a tool named %q, which no capability can name (letters, digits, '_', '.', '-')", server, t.Name))
			continue
		}
		if _, dup := s.members[t.Name]; dup {
			errs = append(errs, fmt.Errorf("server %q lists tool %q twice", server, t.Name))
			continue
		}
		m := serverMember(old.server, t.Name, t.ReadOnlyHint, dir)
		m.description = t.Description
		raw := []byte(t.InputSchema)
		if len(raw) == 0 {
			raw = []byte(`{"type":"object"}`)
		}
		m.schema, m.schemaErr = compileSchema("toolgate:///"+url.PathEscape(server)+"/"+url.PathEscape(t.Name)+".json", raw)
		s.members[t.Name] = m
		s.order = append(s.order, t.Name)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	np := *p
	np.surfaces = maps.Clone(p.surfaces)
	np.surfaces[server] = s
	return &np, nil
}
