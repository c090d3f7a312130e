package workspace

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Duration is a time.Duration written as "30s", "5m", "1h30m".
type Duration time.Duration

// D returns the value as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// durationPattern matches what decodeNode accepts: Go durations such as
// 30s, 1.5h or 1h30m (ParseDuration's units), without a sign. A zero
// duration (0s) matches it but is refused by the loader.
const durationPattern = `^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`

func (*Duration) jsonSchema(*schemaGen) schemaNode {
	return schemaNode{"type": "string", "pattern": durationPattern}
}

func (d *Duration) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n)
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

// OrDefault returns the value, or def when it was not declared.
func (d Duration) OrDefault(def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d.D()
}

// Count is a limit written as a whole number of at least 1; zero means
// "not declared", so a written 0 (which would refuse everything) is a load
// error rather than a silent default.
type Count int

// OrDefault returns the value, or def when it was not declared.
func (c Count) OrDefault(def int) int {
	if c == 0 {
		return def
	}
	return int(c)
}

func (*Count) jsonSchema(*schemaGen) schemaNode {
	return schemaNode{"type": "integer", "minimum": 1}
}

func (c *Count) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n)
	if !ok {
		return
	}
	v, err := strconv.Atoi(s)
	if err != nil || n.Tag != "!!int" || v < 1 {
		dec.errorf(n, "%s must be a whole number of at least 1, not %q", dec.where(), s)
		return
	}
	*c = Count(v)
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

// maxByteSize is the largest size accepted (1 PiB): larger is a typo.
const maxByteSize = 1 << 50

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
	if err != nil || n <= 0 || n > maxByteSize/mult {
		return 0, fmt.Errorf("%q is not a positive size; write it like 1MiB, 512KiB or 10MB", s)
	}
	return ByteSize(n * mult), nil
}

// jsonSchema accepts what ParseByteSize does: a positive whole number of
// bytes, or a string of one with a unit of byteUnits.
func (*ByteSize) jsonSchema(*schemaGen) schemaNode {
	units := make([]string, len(byteUnits))
	for i, u := range byteUnits {
		units[i] = u.suffix
	}
	return schemaNode{"anyOf": []any{
		schemaNode{"type": "integer", "minimum": 1, "maximum": maxByteSize},
		schemaNode{"type": "string", "pattern": `^\s*\+?0*[1-9][0-9]*\s*(` + strings.Join(units, "|") + `)?\s*$`},
	}}
}

func (b *ByteSize) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n)
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

func (*Tier) jsonSchema(*schemaGen) schemaNode {
	return schemaNode{"type": "string", "enum": Tiers}
}

func (t *Tier) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n)
	if !ok {
		return
	}
	if !slices.Contains(Tiers, Tier(s)) {
		dec.errorf(n, "unknown permission tier %q; use one of %s", s, joined(Tiers, ", "))
		return
	}
	*t = Tier(s)
}

func (*Effect) jsonSchema(*schemaGen) schemaNode {
	return schemaNode{"type": "string", "enum": Effects}
}

func (e *Effect) decodeNode(dec *decoder, n *yaml.Node) {
	s, ok := dec.scalar(n)
	if !ok {
		return
	}
	if !slices.Contains(Effects, Effect(s)) {
		dec.errorf(n, "unknown effect %q; use %s", s, joined(Effects, " or "))
		return
	}
	*e = Effect(s)
}

// joined renders a list of string values for messages.
func joined[S ~string](values []S, sep string) string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return strings.Join(out, sep)
}

// jsonSchema is the two forms decodeNode accepts: a capability string,
// or the object of Grant's own fields.
func (*Grant) jsonSchema(g *schemaGen) schemaNode {
	return schemaNode{"oneOf": []any{
		schemaNode{"type": "string", "description": "A capability granted as it is: tool:<surface>:<member>, pack:<id>, server:<id>, tool:<surface>:* or <pack>-<command>."},
		g.ref(reflect.TypeFor[Grant]()),
	}}
}

// decodeNode accepts a grant as a bare capability string or as an object
// {op, param_constraints}.
func (g *Grant) decodeNode(dec *decoder, n *yaml.Node) {
	g.Pos = dec.pos(n)
	if n.Kind == yaml.ScalarNode {
		g.Op = n.Value
		return
	}
	if n.Kind != yaml.MappingNode {
		dec.errorf(n, "a grant is a capability string or {op: ..., param_constraints: {...}}, not a %s", kindName(n))
		return
	}
	type plain Grant
	var p plain
	dec.decodeStruct(n, reflectValue(&p))
	damaged := g.Damaged // set by errors inside, through dec.decls
	*g = Grant(p)
	g.Damaged = damaged
	if g.Op == "" {
		dec.errorf(n, "grant has no op; write op: tool:<surface>:<member> (or pack:<id>, server:<id>)")
	}
}

// constraintField is one key a per-parameter constraint object may hold:
// its description and its schema fragment, beside the decoder that reads
// it (constraintValue), so that the schema and the loader agree.
type constraintField struct {
	key, doc string
	schema   schemaNode
}

// constraintFields are the keys of a constraint object, sorted.
var constraintFields = []constraintField{
	{"const", "The one value the parameter may take.", schemaNode{}},
	{"enum", "The values the parameter may take.", schemaNode{"type": "array", "minItems": 1}},
	{"max_length", "The most characters a string parameter may have.", schemaNode{"type": "integer", "minimum": 0}},
	{"maximum", "The largest number the parameter may be.", schemaNode{"type": "number"}},
	{"minimum", "The smallest number the parameter may be.", schemaNode{"type": "number"}},
	{"path_within", "A directory the parameter, read as a path, must stay inside once cleaned and its symlinks resolved.", schemaNode{"type": "string", "minLength": 1}},
	{"pattern", "An RE2 regular expression the whole string parameter must match (it is anchored at both ends).", schemaNode{"type": "string", "minLength": 1}},
}

// constraintKeys are the keys a per-parameter constraint object may hold.
var constraintKeys = func() []string {
	out := make([]string, len(constraintFields))
	for i, f := range constraintFields {
		out[i] = f.key
	}
	return out
}()

// jsonSchema is what decodeNode reads: each parameter name maps to a
// constraint object of constraintFields, or is a shorthand max_<param>: N
// or allowed_<param>: [values].
func (*Constraints) jsonSchema(g *schemaGen) schemaNode {
	if _, done := g.defs["Constraint"]; !done {
		props := schemaNode{}
		for _, f := range constraintFields {
			p := schemaNode{"description": f.doc}
			for k, v := range f.schema {
				p[k] = v
			}
			props[f.key] = p
		}
		g.defs["Constraint"] = schemaNode{"type": "object", "properties": props, "additionalProperties": false,
			"description": "The bounds of one parameter; a call whose value breaks any of them is refused, and so is a call without the parameter."}
	}
	constraint := schemaNode{"$ref": "#/$defs/Constraint"}
	return schemaNode{
		"type": "object",
		"patternProperties": schemaNode{
			"^max_.":     schemaNode{"anyOf": []any{schemaNode{"type": "number", "description": "Shorthand: max_<param>: N is {<param>: {maximum: N}}."}, constraint}},
			"^allowed_.": schemaNode{"anyOf": []any{schemaNode{"type": "array", "minItems": 1, "description": "Shorthand: allowed_<param>: [values] is {<param>: {enum: [values]}}."}, constraint}},
		},
		"additionalProperties": constraint,
	}
}

// decodeNode reads param_constraints: each key is a parameter name holding a
// constraint object, or a legacy shorthand max_<param>: N / allowed_<param>: [..].
func (c *Constraints) decodeNode(dec *decoder, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		dec.errorf(n, "%s must map parameter names to constraints, for example {path: {path_within: /data}}", dec.where())
		return
	}
	byParam := map[string]*Constraint{}
	// claim starts the one constraint of param, refusing a second one so
	// that no bound silently replaces another.
	claim := func(param string, k *yaml.Node) *Constraint {
		if prev, dup := byParam[param]; dup {
			dec.errorf(k, "%s: parameter %q is already constrained at %s; write all its bounds in one object", dec.where(), param, prev.Pos)
			return nil
		}
		c2 := &Constraint{Pos: dec.pos(k), Param: param}
		byParam[param] = c2
		*c = append(*c, c2)
		return c2
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, ok := dec.key(n.Content[i])
		if !ok {
			continue
		}
		k, v := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		switch {
		case v.Kind == yaml.MappingNode:
			if kc := claim(name, k); kc != nil {
				dec.push(name)
				dec.decodeConstraint(name, v, kc)
				dec.pop()
			}
		case strings.HasPrefix(name, "max_") && v.Kind == yaml.ScalarNode && len(name) > 4:
			dec.push(name)
			f, ok := dec.number(v)
			dec.pop()
			if ok {
				if kc := claim(strings.TrimPrefix(name, "max_"), k); kc != nil {
					kc.Maximum = &f
				}
			}
		case strings.HasPrefix(name, "allowed_") && v.Kind == yaml.SequenceNode && len(name) > 8:
			dec.push(name)
			if list, ok := dec.enum(v); ok {
				if kc := claim(strings.TrimPrefix(name, "allowed_"), k); kc != nil {
					kc.Enum = list
				}
			}
			dec.pop()
		default:
			dec.errorf(k, "%s: key %q needs a constraint object (keys: %s), or is the shorthand max_<param>: N or allowed_<param>: [..]",
				dec.where(), name, strings.Join(constraintKeys, ", "))
		}
	}
}

// enum reads a non-empty list of allowed values.
func (dec *decoder) enum(n *yaml.Node) ([]any, bool) {
	vals, ok := dec.anyValue(n)
	if !ok {
		return nil, false
	}
	if list, isList := vals.([]any); isList && len(list) > 0 {
		return list, true
	}
	dec.errorf(n, "%s must be a non-empty list of allowed values", dec.where())
	return nil, false
}

func (dec *decoder) number(n *yaml.Node) (float64, bool) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		dec.errorf(n, "%s must be a number", dec.where())
		return 0, false
	}
	v, ok := dec.jsonNumber(n)
	if !ok {
		return 0, false
	}
	return v.(float64), true
}

func (dec *decoder) decodeConstraint(param string, n *yaml.Node, c *Constraint) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		name, ok := dec.key(n.Content[i])
		if !ok {
			continue
		}
		k, v := resolveAlias(n.Content[i]), resolveAlias(n.Content[i+1])
		if seen[name] {
			dec.errorf(k, "%s: key %q is given twice; keep one", dec.where(), name)
			continue
		}
		seen[name] = true
		if !slices.Contains(constraintKeys, name) {
			dec.errorf(k, "unknown constraint %q on parameter %q; valid constraints are: %s", name, param, strings.Join(constraintKeys, ", "))
			continue
		}
		dec.push(name)
		dec.constraintValue(name, v, c)
		dec.pop()
	}
}

// constraintValue reads one known constraint key into c.
func (dec *decoder) constraintValue(name string, v *yaml.Node, c *Constraint) {
	switch name {
	case "enum":
		if list, ok := dec.enum(v); ok {
			c.Enum = list
		}
	case "const":
		if val, ok := dec.anyValue(v); ok {
			c.Const, c.HasConst = val, true
		}
	case "pattern":
		if s, ok := dec.text(v); ok {
			c.Pattern = s
		}
	case "minimum":
		if f, ok := dec.number(v); ok {
			c.Minimum = &f
		}
	case "maximum":
		if f, ok := dec.number(v); ok {
			c.Maximum = &f
		}
	case "max_length":
		if f, ok := dec.number(v); ok {
			if f < 0 || f != float64(int(f)) {
				dec.errorf(v, "%s must be a whole number ≥ 0", dec.where())
				return
			}
			m := int(f)
			c.MaxLength = &m
		}
	case "path_within":
		if s, ok := dec.text(v); ok {
			c.PathWithin = s
		}
	}
}

// text returns a non-empty scalar's text, or records that one was expected.
func (dec *decoder) text(n *yaml.Node) (string, bool) {
	s, ok := dec.scalar(n)
	if ok && (s == "" || n.Tag == "!!null") {
		dec.errorf(n, "%s must not be empty", dec.where())
		return "", false
	}
	return s, ok
}
