package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/toolgate/toolgate/grantcheck"
)

// opencodeRule is one entry of OpenCode's permission rules: a tool name
// or glob, the argument pattern it applies to, and allow, deny or ask.
type opencodeRule struct {
	tool, pattern, action string
}

// opencodeSettings reads which MCP tools an opencode.json lets the model
// call, as <server>_<tool> names. OpenCode turns its tools map into rules
// (true allow, false deny), puts the permission map's rules after them,
// each in the order written, and the last rule whose glob matches a tool
// name decides: deny drops the tool, ask makes opencode run reject the
// call, allow (or no rule) runs it. Servers with enabled: false are off.
func opencodeSettings(path string, known grantcheck.Known) (source, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return source{}, fmt.Errorf("read %s: %w", path, err)
	}
	top, err := orderedObject(data)
	if err != nil {
		return source{}, fmt.Errorf("%s: %w", path, err)
	}
	var rules []opencodeRule
	servers := map[string]bool{}
	for _, kv := range top {
		switch kv.key {
		case "mcp":
			var mcp map[string]struct {
				Enabled *bool `json:"enabled"`
			}
			if err := json.Unmarshal(kv.val, &mcp); err != nil {
				return source{}, fmt.Errorf("%s: mcp: %w", path, err)
			}
			for id, s := range mcp {
				servers[id] = s.Enabled == nil || *s.Enabled
			}
		case "tools":
			entries, err := orderedObject(kv.val)
			if err != nil {
				return source{}, fmt.Errorf("%s: tools: %w", path, err)
			}
			for _, e := range entries {
				var on bool
				if err := json.Unmarshal(e.val, &on); err != nil {
					return source{}, fmt.Errorf("%s: tools.%s: expected true or false", path, e.key)
				}
				action := "deny"
				if on {
					action = "allow"
				}
				rules = append(rules, opencodeRule{e.key, "*", action})
			}
		}
	}
	// permission comes after tools whatever the order in the file.
	for _, kv := range top {
		if kv.key != "permission" {
			continue
		}
		entries, err := orderedObject(kv.val)
		if err != nil {
			return source{}, fmt.Errorf("%s: permission: %w", path, err)
		}
		for _, e := range entries {
			var action string
			if json.Unmarshal(e.val, &action) == nil {
				rules = append(rules, opencodeRule{e.key, "*", action})
				continue
			}
			patterns, err := orderedObject(e.val)
			if err != nil {
				return source{}, fmt.Errorf("%s: permission.%s: expected allow, deny, ask or {pattern: action}", path, e.key)
			}
			for _, p := range patterns {
				if err := json.Unmarshal(p.val, &action); err != nil {
					return source{}, fmt.Errorf("%s: permission.%s.%s: expected allow, deny or ask", path, e.key, p.key)
				}
				rules = append(rules, opencodeRule{e.key, p.key, action})
			}
		}
	}
	var src source
	decide := func(name string) string {
		action := "allow"
		for _, r := range rules {
			// An MCP call is asked for with the pattern "*": only rules
			// whose pattern matches it apply.
			if grantcheck.GlobMatch(r.tool, name) && grantcheck.GlobMatch(r.pattern, "*") {
				action = r.action
			}
		}
		return action
	}
	for _, id := range slices.Sorted(maps.Keys(servers)) {
		if !servers[id] {
			continue
		}
		name := func(tool string) string { return grantcheck.ToolName(grantcheck.NamingOpenCode, id, tool) }
		members := known[id]
		if members == nil {
			// The server's tools are not known: decide for a name no rule
			// spells out, then add what rules name one by one.
			if decide(name("\x01")) == "allow" {
				src.entries = append(src.entries, name("*"))
			}
			for _, r := range rules {
				if r.action == "allow" && strings.HasPrefix(r.tool, name("")) && !strings.ContainsAny(r.tool, "*?") && decide(r.tool) == "allow" {
					src.entries = append(src.entries, r.tool)
				}
			}
			continue
		}
		for _, m := range members {
			switch decide(name(m)) {
			case "allow":
				src.entries = append(src.entries, name(m))
			case "ask":
				src.notes = append(src.notes, fmt.Sprintf("%s asks for permission, and opencode run rejects what it would ask about", name(m)))
			}
		}
	}
	return src, nil
}

// keyValue is one member of a JSON object, in the order written.
type keyValue struct {
	key string
	val json.RawMessage
}

// orderedObject reads a JSON object keeping its members' order, which
// OpenCode's last-match-wins rules depend on (a Go map would lose it). A
// key written twice keeps its first place and its last value, as
// JavaScript's JSON.parse does.
func orderedObject(data []byte) ([]keyValue, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object")
	}
	var out []keyValue
	at := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		if i, dup := at[key]; dup {
			out[i].val = val
			continue
		}
		at[key] = len(out)
		out = append(out, keyValue{key, val})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}
