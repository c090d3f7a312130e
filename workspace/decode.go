package workspace

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// decoder turns a yaml.Node tree into the typed declarations, strictly:
// unknown keys, duplicate keys and wrong kinds are recorded with their
// position and decoding carries on, so one run reports every problem.
type decoder struct {
	file string
	errs ErrorList
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs = append(d.errs, &Error{Pos: d.pos(n), Msg: fmt.Sprintf(format, args...)})
}

var (
	posType     = reflect.TypeFor[Pos]()
	keyPosType  = reflect.TypeFor[map[string]Pos]()
	posListType = reflect.TypeFor[[]Pos]()
)

// nodeDecoder is implemented by types whose YAML form is not a plain struct.
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node)
}

// resolveAlias follows YAML aliases; anchors are allowed, merge keys are not.
func resolveAlias(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// decode fills v (a settable value) from n, recording problems in d.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, what string) {
	n = resolveAlias(n)
	if n == nil {
		return
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			nd.decodeNode(d, n)
			return
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(n, v.Elem(), what)
	case reflect.Struct:
		d.decodeStruct(n, v, what)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.errorf(n, "%s must be a list (for example [a, b])", what)
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", what, i))
		}
		v.Set(s)
	case reflect.Map:
		d.decodeMap(n, v, what, nil)
	case reflect.String:
		if s, ok := d.scalar(n, what); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n, what); ok {
			b, err := strconv.ParseBool(s)
			if err != nil || n.Tag != "!!bool" {
				d.errorf(n, "%s must be true or false, not %q", what, s)
				return
			}
			v.SetBool(b)
		}
	case reflect.Int:
		if s, ok := d.scalar(n, what); ok {
			i, err := strconv.Atoi(s)
			if err != nil {
				d.errorf(n, "%s must be a whole number, not %q", what, s)
				return
			}
			v.SetInt(int64(i))
		}
	case reflect.Interface:
		val, ok := d.anyValue(n, what)
		if ok && val != nil {
			v.Set(reflect.ValueOf(val))
		}
	default:
		panic(fmt.Sprintf("workspace: no decoder for %s", v.Type()))
	}
}

// scalar returns a scalar node's text, or records that a scalar was expected.
func (d *decoder) scalar(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s must be a single value, not a %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	default:
		return "value"
	}
}

// fieldIndex lists a struct's YAML keys, following inline embeddings.
func fieldIndex(t reflect.Type) (map[string][]int, []string) {
	idx := map[string][]int{}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		if opt == "inline" {
			sub, subNames := fieldIndex(f.Type)
			for k, p := range sub {
				idx[k] = append([]int{i}, p...)
			}
			names = append(names, subNames...)
			continue
		}
		idx[name] = []int{i}
		names = append(names, name)
	}
	return idx, names
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, what string) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of keys to values, not a %s", what, kindName(n))
		return
	}
	t := v.Type()
	if f, ok := t.FieldByName("Pos"); ok && f.Type == posType {
		v.FieldByIndex(f.Index).Set(reflect.ValueOf(d.pos(n)))
	}
	if f, ok := t.FieldByName("SecretRef"); ok && f.Anonymous {
		v.FieldByIndex(f.Index).FieldByName("Pos").Set(reflect.ValueOf(d.pos(n)))
	}
	var keyPos map[string]Pos
	if f, ok := t.FieldByName("KeyPos"); ok && f.Type == keyPosType {
		keyPos = map[string]Pos{}
		v.FieldByIndex(f.Index).Set(reflect.ValueOf(keyPos))
	}
	idx, names := fieldIndex(t)
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Value == "<<" {
			d.errorf(k, "YAML merge keys (<<) are not supported in %s; write the fields out", what)
			continue
		}
		if seen[k.Value] {
			d.errorf(k, "%s: key %q is given twice; keep one", what, k.Value)
			continue
		}
		seen[k.Value] = true
		fi, ok := idx[k.Value]
		if !ok {
			d.errorf(k, "unknown field %q in %s; valid fields are: %s", k.Value, what, strings.Join(sorted(names), ", "))
			continue
		}
		fv := v.FieldByIndex(fi)
		sub := what + "." + k.Value
		if fv.Kind() == reflect.Map && keyPos != nil {
			d.decodeMap(val, fv, sub, func(key string, kn *yaml.Node) { keyPos[k.Value+"."+key] = d.pos(kn) })
			continue
		}
		d.decode(val, fv, sub)
		if f, ok := t.FieldByName(fieldName(t, fi) + "Pos"); ok && f.Type == posListType {
			d.fillListPos(val, v.FieldByIndex(f.Index))
		}
	}
}

func fieldName(t reflect.Type, index []int) string { return t.FieldByIndex(index).Name }

func (d *decoder) fillListPos(n *yaml.Node, v reflect.Value) {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return
	}
	ps := make([]Pos, len(n.Content))
	for i, item := range n.Content {
		ps[i] = d.pos(item)
	}
	v.Set(reflect.ValueOf(ps))
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, what string, onKey func(string, *yaml.Node)) {
	n = resolveAlias(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of keys to values, not a %s", what, kindName(n))
		return
	}
	if v.Kind() == reflect.Map && v.Type().Key().Kind() != reflect.String {
		panic("workspace: map keys must be strings")
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "%s: keys must be plain strings", what)
			continue
		}
		if m.MapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key())).IsValid() {
			d.errorf(k, "%s: key %q is given twice; keep one", what, k.Value)
			continue
		}
		ev := reflect.New(v.Type().Elem()).Elem()
		d.decode(val, ev, what+"."+k.Value)
		if onKey != nil {
			onKey(k.Value, k)
		}
		if ev.Kind() == reflect.Pointer && ev.IsNil() {
			ev.Set(reflect.New(ev.Type().Elem()))
		}
		if nm := ev; nm.Kind() == reflect.Pointer {
			if f := nm.Elem().FieldByName("Name"); f.IsValid() && f.Kind() == reflect.String {
				f.SetString(k.Value)
			}
		}
		m.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), ev)
	}
	v.Set(m)
}

// anyValue converts a node into the JSON data model (map[string]any, []any,
// string, float64, bool, nil), which is what JSON Schemas and constraint
// values are compared against.
func (d *decoder) anyValue(n *yaml.Node, what string) (any, bool) {
	n = resolveAlias(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if _, dup := m[k.Value]; dup {
				d.errorf(k, "%s: key %q is given twice; keep one", what, k.Value)
				continue
			}
			val, ok := d.anyValue(n.Content[i+1], what+"."+k.Value)
			if !ok {
				return nil, false
			}
			m[k.Value] = val
		}
		return m, true
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for i, item := range n.Content {
			val, ok := d.anyValue(item, fmt.Sprintf("%s[%d]", what, i))
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
			f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
			if err != nil {
				i, ierr := strconv.ParseInt(n.Value, 0, 64)
				if ierr != nil {
					d.errorf(n, "%s: %q is not a number JSON can hold", what, n.Value)
					return nil, false
				}
				f = float64(i)
			}
			return f, true
		default:
			return n.Value, true
		}
	}
	d.errorf(n, "%s: unsupported YAML value", what)
	return nil, false
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
