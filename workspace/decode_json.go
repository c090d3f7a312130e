package workspace

import (
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// anyValue converts a node into the JSON data model (map[string]any, []any,
// string, float64, bool, nil), which is what JSON Schemas and constraint
// values are compared against.
func (d *decoder) anyValue(n *yaml.Node) (any, bool) {
	orig := n
	if n = d.enter(n); n == nil {
		return nil, false
	}
	defer d.leave(orig)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			name, ok := d.key(k)
			if !ok {
				return nil, false
			}
			if _, dup := m[name]; dup {
				d.errorf(k, "%s: key %q is given twice; keep one", d.where(), name)
				return nil, false
			}
			d.push(name)
			val, ok := d.anyValue(n.Content[i+1])
			d.pop()
			if !ok {
				return nil, false
			}
			m[name] = val
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			d.pushIndex(i)
			val, ok := d.anyValue(item)
			d.pop()
			if !ok {
				return nil, false
			}
			s = append(s, val)
		}
		return s, true
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return nil, true
		case "!!bool":
			b, _ := strconv.ParseBool(n.Value)
			return b, true
		case "!!int", "!!float":
			return d.jsonNumber(n)
		default:
			return n.Value, true
		}
	}
	d.errorf(n, "%s: unsupported YAML value", d.where())
	return nil, false
}

// jsonNumber reads an int or float scalar as the float64 JSON holds. YAML's
// .inf and .nan, and numbers out of float64 range, are refused.
func (d *decoder) jsonNumber(n *yaml.Node) (any, bool) {
	plain := strings.ReplaceAll(n.Value, "_", "")
	if n.Tag == "!!int" {
		if i, err := strconv.ParseInt(plain, 0, 64); err == nil {
			return float64(i), true
		}
		if u, err := strconv.ParseUint(plain, 0, 64); err == nil {
			return float64(u), true
		}
	}
	f, err := strconv.ParseFloat(plain, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		d.errorf(n, "%s: %q is not a number JSON can hold", d.where(), n.Value)
		return nil, false
	}
	return f, true
}
