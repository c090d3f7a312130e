package grantcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// narrowSchema returns a copy of raw (a tool's input schema) tightened by a
// grant's constraints, so that tools/list tells the model the bounds it will
// be held to: enum intersected or added, const set, minimum and maximum
// tightened, maxLength tightened, pattern added (kept beside an existing one
// through allOf), path_within noted in the description, and every
// constrained parameter required. raw itself is never modified; with no
// constraints it is returned as is.
func narrowSchema(raw json.RawMessage, cons []*constraint) (json.RawMessage, error) {
	if len(cons) == 0 {
		return raw, nil
	}
	if len(raw) == 0 {
		raw = json.RawMessage(`{"type":"object"}`)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil || root == nil {
		return nil, fmt.Errorf("input schema is not a JSON object: %v", err)
	}
	props, _ := root["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		root["properties"] = props
	}
	required, _ := root["required"].([]any)
	for _, k := range cons {
		prop, ok := props[k.param].(map[string]any)
		if !ok {
			if b, isBool := props[k.param].(bool); isBool && !b {
				continue // already accepts nothing
			}
			prop = map[string]any{}
			props[k.param] = prop
		}
		narrowProperty(prop, k)
		if !slices.ContainsFunc(required, func(r any) bool { return r == k.param }) {
			required = append(required, k.param)
		}
	}
	root["required"] = required
	return json.Marshal(root)
}

func narrowProperty(prop map[string]any, k *constraint) {
	if k.enum != nil {
		if have, ok := prop["enum"].([]any); ok {
			var both []any
			for _, v := range k.enum {
				if inValues(v, have) {
					both = append(both, v)
				}
			}
			prop["enum"] = nonNil(both)
		} else {
			prop["enum"] = k.enum
		}
	}
	if k.hasConst {
		if have, ok := prop["const"]; ok && !jsonEqual(have, k.constVal) {
			addAllOf(prop, map[string]any{"const": k.constVal})
		} else {
			prop["const"] = k.constVal
		}
	}
	if k.min != nil {
		if have, ok := number(prop["minimum"]); !ok || *k.min > have {
			prop["minimum"] = *k.min
		}
	}
	if k.max != nil {
		if have, ok := number(prop["maximum"]); !ok || *k.max < have {
			prop["maximum"] = *k.max
		}
	}
	if k.maxLen >= 0 {
		if have, ok := number(prop["maxLength"]); !ok || float64(k.maxLen) < have {
			prop["maxLength"] = k.maxLen
		}
	}
	if k.pattern != nil {
		if _, ok := prop["pattern"]; ok {
			addAllOf(prop, map[string]any{"pattern": k.pattern.String()})
		} else {
			prop["pattern"] = k.pattern.String()
		}
	}
	if k.within != "" {
		note := fmt.Sprintf("Must be a path within %s.", k.withinAsWritten)
		if d, ok := prop["description"].(string); ok && d != "" {
			note = d + " " + note
		}
		prop["description"] = note
	}
}

func addAllOf(prop map[string]any, sub map[string]any) {
	all, _ := prop["allOf"].([]any)
	prop["allOf"] = append(all, sub)
}

func nonNil(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}
