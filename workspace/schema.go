package workspace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// SchemaDialect is the JSON Schema draft the generated schema is written in.
const SchemaDialect = "https://json-schema.org/draft/2020-12/schema"

// schemaNode is one JSON Schema object as it is built.
type schemaNode = map[string]any

// schemaFragment is implemented by every type whose YAML form is not what
// its Go kind says (a nodeDecoder): it declares the schema of what its
// decodeNode accepts, beside that decoder. The generator refuses a
// nodeDecoder without one, so no custom form goes undescribed.
type schemaFragment interface {
	jsonSchema(g *schemaGen) schemaNode
}

// Schema returns the JSON Schema (draft 2020-12) of toolgate.yaml,
// generated from the Go types the loader decodes into: the same yaml keys,
// the descriptions of their doc tags, the enum, required and id rules the
// loader enforces, additionalProperties: false wherever the loader refuses
// unknown keys, and each custom form's own fragment. It is what
// `toolgate schema` prints, indented, with a final newline.
func Schema() ([]byte, error) {
	root, err := schemaOf(reflect.TypeFor[Workspace]())
	if err != nil {
		return nil, err
	}
	root["$schema"] = SchemaDialect
	root["title"] = "toolgate workspace (toolgate.yaml)"
	root["description"] = "A toolgate workspace: the MCP servers and command packs it serves, the agents that call them and the grants that bound each agent. Reference: docs/workspace.md."
	root["properties"].(schemaNode)["version"].(schemaNode)["const"] = FormatVersion
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // descriptions write <surface>; keep them readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// schemaOf is the schema of root, with the struct types it reaches under
// $defs; the error names every field that has no description.
func schemaOf(root reflect.Type) (schemaNode, error) {
	g := &schemaGen{defs: schemaNode{}, layout: &decoder{structs: map[reflect.Type]*structInfo{}}}
	s := g.structSchema(root)
	if len(g.defs) > 0 {
		s["$defs"] = g.defs
	}
	if len(g.errs) > 0 {
		return nil, errors.New(strings.Join(g.errs, "\n"))
	}
	return s, nil
}

// schemaGen builds a schema by walking the types as the decoder does.
type schemaGen struct {
	defs schemaNode
	errs []string
	// layout gives each struct's YAML keys exactly as the decoder reads
	// them (structInfo), so the schema cannot name a key the loader lacks.
	layout *decoder
}

var (
	fragmentType    = reflect.TypeFor[schemaFragment]()
	nodeDecoderType = reflect.TypeFor[nodeDecoder]()
)

// typeSchema is the schema of a value of type t.
func (g *schemaGen) typeSchema(t reflect.Type) schemaNode {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	pt := reflect.PointerTo(t)
	if pt.Implements(fragmentType) {
		return reflect.New(t).Interface().(schemaFragment).jsonSchema(g)
	}
	if pt.Implements(nodeDecoderType) {
		g.errs = append(g.errs, fmt.Sprintf("%s has its own YAML decoder but declares no schema fragment; add a jsonSchema method beside its decodeNode", t))
		return schemaNode{}
	}
	switch t.Kind() {
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice:
		return schemaNode{"type": "array", "items": g.typeSchema(t.Elem())}
	case reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return schemaNode{"type": "object"}
		}
		return schemaNode{"type": "object", "additionalProperties": g.typeSchema(t.Elem())}
	case reflect.String:
		// The decoder reads any scalar as its text (argv: [sleep, 5]).
		return schemaNode{"type": []any{"string", "number", "boolean"}}
	case reflect.Bool:
		return schemaNode{"type": "boolean"}
	case reflect.Int:
		return schemaNode{"type": "integer"}
	case reflect.Interface:
		return schemaNode{}
	}
	g.errs = append(g.errs, fmt.Sprintf("%s: no schema for Go kind %s", t, t.Kind()))
	return schemaNode{}
}

// ref puts t's struct schema under $defs (once) and refers to it.
func (g *schemaGen) ref(t reflect.Type) schemaNode {
	name := t.Name()
	if _, done := g.defs[name]; !done {
		g.defs[name] = schemaNode{} // reserved: a type may reach itself
		g.defs[name] = g.structSchema(t)
	}
	return schemaNode{"$ref": "#/$defs/" + name}
}

// structSchema is the object schema of struct t: one property per YAML key
// the decoder reads, described by its doc tag, and no other key.
func (g *schemaGen) structSchema(t reflect.Type) schemaNode {
	si := g.layout.structInfo(t)
	props := schemaNode{}
	var required []string
	for name, fi := range si.fields {
		f := t.FieldByIndex(fi.index)
		p := g.typeSchema(f.Type)
		if fi.oneOrList {
			p = schemaNode{"anyOf": []any{g.typeSchema(f.Type.Elem()), p}}
		}
		if fi.enum != nil {
			p["enum"] = fi.enum
		}
		doc := f.Tag.Get("doc")
		if doc == "" {
			g.errs = append(g.errs, fmt.Sprintf("%s.%s (yaml %q) has no description; give it a doc:\"...\" tag saying what it does", t, f.Name, name))
		}
		p = nullable(p)
		p["description"] = doc
		opts := strings.Split(f.Tag.Get("schema"), ",")
		if slices.Contains(opts, "id") {
			p["pattern"] = IDPattern.String()
		}
		if slices.Contains(opts, "required") {
			required = append(required, name)
		}
		props[name] = p
	}
	s := schemaNode{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		slices.Sort(required)
		s["required"] = required
	}
	return s
}

// nullable lets a property be null, as the decoder reads a key written
// with no value (gateway:) as one left out. List items and map values stay
// non-null: the decoder refuses an empty one.
func nullable(p schemaNode) schemaNode {
	switch t := p["type"].(type) {
	case string:
		p["type"] = []any{t, "null"}
	case []any:
		p["type"] = append(t, "null")
	default:
		return schemaNode{"anyOf": []any{schemaNode{"type": "null"}, p}}
	}
	if e, ok := p["enum"]; ok {
		p["enum"] = append(anySlice(e), nil)
	}
	return p
}

// anySlice converts a slice of any element type to []any.
func anySlice(s any) []any {
	v := reflect.ValueOf(s)
	out := make([]any, v.Len())
	for i := range out {
		out[i] = v.Index(i).Interface()
	}
	return out
}
