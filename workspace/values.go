package workspace

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "30s", "5m", "1h30m".
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d *Duration) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n, "duration")
	if !ok {
		return
	}
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		dec.errorf(n, "%q is not a positive duration; write it like 30s, 5m or 1h30m", s)
		return
	}
	*d = Duration(v)
}

// ByteSize is a size in bytes written as "1MiB", "512KiB", "10MB" or a number.
type ByteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// ParseByteSize parses the forms ByteSize accepts.
func ParseByteSize(s string) (ByteSize, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<50)/mult {
		return 0, fmt.Errorf("%q is not a positive size; write it like 1MiB, 512KiB or 10MB", s)
	}
	return ByteSize(n * mult), nil
}

func (b *ByteSize) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n, "size")
	if !ok {
		return
	}
	v, err := ParseByteSize(s)
	if err != nil {
		dec.errorf(n, "%v", err)
		return
	}
	*b = v
}

func (t *Tier) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n, "permission")
	if !ok {
		return
	}
	switch Tier(s) {
	case TierOpen, TierCautious, TierStrict, TierReadonly:
		*t = Tier(s)
	default:
		dec.errorf(n, "unknown permission tier %q; use one of open, cautious, strict, readonly", s)
	}
}

func (e *Effect) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n, "effects")
	if !ok {
		return
	}
	switch Effect(s) {
	case EffectRead, EffectWrite:
		*e = Effect(s)
	default:
		dec.errorf(n, "unknown effect %q; use read or write", s)
	}
}

// decodeNode accepts a grant as a bare capability string or as an object
// {op, param_constraints}.
func (g *Grant) decodeNode(dec *decoder, n *yaml.Node) {
	g.Pos = dec.pos(n)
	if n.Kind == yaml.ScalarNode {
		g.Op = n.Value
		return
	}
	type plain Grant
	var p plain
	dec.decodeStruct(n, reflectValue(&p), "grant")
	*g = Grant(p)
	if g.Op == "" {
		dec.errorf(n, "grant has no op; write op: tool:<surface>:<member> (or pack:<id>, server:<id>)")
	}
}

// constraintKeys are the keys a per-parameter constraint object may hold.
var constraintKeys = []string{"const", "enum", "max_length", "maximum", "minimum", "path_within", "pattern"}

// decodeNode reads param_constraints: each key is a parameter name holding a
// constraint object, or a legacy shorthand max_<param>: N / allowed_<param>: [..].
func (c *Constraints) decodeNode(dec *decoder, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		dec.errorf(n, "param_constraints must map parameter names to constraints, for example {path: {path_within: /data}}")
		return
	}
	byParam := map[string]*Constraint{}
	get := func(param string, at *yaml.Node) *Constraint {
		if k, ok := byParam[param]; ok {
			return k
		}
		k := &Constraint{Pos: dec.pos(at), Param: param}
		byParam[param] = k
		*c = append(*c, k)
		return k
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		switch {
		case v.Kind == yaml.MappingNode:
			dec.decodeConstraint(k.Value, v, get(k.Value, k))
		case strings.HasPrefix(k.Value, "max_") && v.Kind == yaml.ScalarNode && len(k.Value) > 4:
			f, ok := dec.number(v, k.Value)
			if ok {
				kk := get(strings.TrimPrefix(k.Value, "max_"), k)
				kk.Maximum = &f
			}
		case strings.HasPrefix(k.Value, "allowed_") && v.Kind == yaml.SequenceNode && len(k.Value) > 8:
			vals, ok := dec.anyValue(v, k.Value)
			if ok {
				get(strings.TrimPrefix(k.Value, "allowed_"), k).Enum = vals.([]any)
			}
		default:
			dec.errorf(k, "param_constraints key %q: expected a parameter name with a constraint object (keys: %s), or the shorthand max_<param>: N or allowed_<param>: [..]",
				k.Value, strings.Join(constraintKeys, ", "))
		}
	}
}

func (dec *decoder) number(n *yaml.Node, what string) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		dec.errorf(n, "%s must be a number", what)
		return 0, false
	}
	v, ok := dec.anyValue(n, what)
	if !ok {
		return 0, false
	}
	return v.(float64), true
}

func (dec *decoder) decodeConstraint(param string, n *yaml.Node, c *Constraint) {
	what := "param_constraints." + param
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolveAlias(n.Content[i+1])
		switch k.Value {
		case "enum":
			vals, ok := dec.anyValue(v, what+".enum")
			if list, isList := vals.([]any); ok && isList && len(list) > 0 {
				c.Enum = list
			} else if ok {
				dec.errorf(v, "%s.enum must be a non-empty list of allowed values", what)
			}
		case "const":
			if val, ok := dec.anyValue(v, what+".const"); ok {
				c.Const, c.HasConst = val, true
			}
		case "pattern":
			if s, ok := dec.scalar(v, what+".pattern"); ok {
				c.Pattern = s
			}
		case "minimum":
			if f, ok := dec.number(v, what+".minimum"); ok {
				c.Minimum = &f
			}
		case "maximum":
			if f, ok := dec.number(v, what+".maximum"); ok {
				c.Maximum = &f
			}
		case "max_length":
			if f, ok := dec.number(v, what+".max_length"); ok {
				if f < 0 || f != float64(int(f)) {
					dec.errorf(v, "%s.max_length must be a whole number ≥ 0", what)
				} else {
					m := int(f)
					c.MaxLength = &m
				}
			}
		case "path_within":
			if s, ok := dec.scalar(v, what+".path_within"); ok {
				c.PathWithin = s
			}
		default:
			dec.errorf(k, "unknown constraint %q on parameter %q; valid constraints are: %s", k.Value, param, strings.Join(constraintKeys, ", "))
		}
	}
}
