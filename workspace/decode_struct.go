package workspace

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// structInfo is the YAML layout of one struct type, computed once per
// decoder so that decoding thousands of commands does not re-walk the type.
type structInfo struct {
	fields map[string]fieldInfo
	// names are the YAML keys, sorted, for "valid fields are" messages.
	names string
	// pos, secretPos and keyPos index the Pos, embedded SecretRef.Pos and
	// KeyPos fields, and damaged the Damaged field of a declaration; nil
	// when the struct has none.
	pos, secretPos, keyPos, damaged []int
}

// fieldInfo is one YAML key of a struct.
type fieldInfo struct {
	index []int
	// ord numbers the keys of one struct, for the seen-keys bit set.
	ord int
	// listPos indexes the <Field>Pos []Pos field recording where each list
	// element was written; nil when there is none.
	listPos []int
	// oneOrList accepts a single value where a list is declared (tag option
	// ",one_or_list"), for fields the design writes both ways.
	oneOrList bool
	isMap     bool
	// enum lists the values a string field may take (tag enum:"a,b"); the
	// schema reads the same tag.
	enum []string
}

// structInfo returns the cached layout of t.
func (d *decoder) structInfo(t reflect.Type) *structInfo {
	if si, ok := d.structs[t]; ok {
		return si
	}
	si := &structInfo{fields: map[string]fieldInfo{}}
	var names []string
	d.indexFields(t, nil, si, &names)
	if len(names) > 64 {
		panic(fmt.Sprintf("workspace: %s has more than 64 YAML fields", t))
	}
	si.names = strings.Join(sorted(names), ", ")
	if f, ok := t.FieldByName("Pos"); ok && f.Type == posType {
		si.pos = f.Index
	}
	if f, ok := t.FieldByName("SecretRef"); ok && f.Anonymous && f.Type == secretRefType {
		p, _ := secretRefType.FieldByName("Pos")
		si.secretPos = append(append([]int(nil), f.Index...), p.Index...)
	}
	if f, ok := t.FieldByName("KeyPos"); ok && f.Type == keyPosType {
		si.keyPos = f.Index
	}
	if f, ok := t.FieldByName("Damaged"); ok && f.Type.Kind() == reflect.Bool {
		si.damaged = f.Index
	}
	d.structs[t] = si
	return si
}

// indexFields records t's YAML keys, following inline embeddings.
func (d *decoder) indexFields(t reflect.Type, prefix []int, si *structInfo, names *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" {
			continue
		}
		index := append(append([]int(nil), prefix...), i)
		name, opt, _ := strings.Cut(tag, ",")
		if opt == "inline" {
			d.indexFields(f.Type, index, si, names)
			continue
		}
		fi := fieldInfo{index: index, ord: len(*names), oneOrList: opt == "one_or_list", isMap: f.Type.Kind() == reflect.Map}
		if e, ok := f.Tag.Lookup("enum"); ok {
			fi.enum = strings.Split(e, ",")
		}
		if lp, ok := t.FieldByName(f.Name + "Pos"); ok && lp.Type == posListType {
			fi.listPos = append(append([]int(nil), prefix...), lp.Index...)
		}
		si.fields[name] = fi
		*names = append(*names, name)
	}
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value) {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of keys to values, not a %s", d.where(), kindName(n))
		return
	}
	si := d.structInfo(v.Type())
	if si.pos != nil {
		v.FieldByIndex(si.pos).Set(reflect.ValueOf(d.pos(n)))
	}
	if si.secretPos != nil {
		v.FieldByIndex(si.secretPos).Set(reflect.ValueOf(d.pos(n)))
	}
	var keyPos map[string]Pos
	if si.keyPos != nil {
		keyPos = map[string]Pos{}
		v.FieldByIndex(si.keyPos).Set(reflect.ValueOf(keyPos))
	}
	var seen uint64 // bit fieldInfo.ord is set once that key is decoded
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k)
		if !ok {
			continue
		}
		fi, ok := si.fields[name]
		if !ok {
			d.errorf(k, "unknown field %q in %s; valid fields are: %s", name, d.where(), si.names)
			continue
		}
		if seen&(1<<fi.ord) != 0 {
			d.errorf(k, "%s: key %q is given twice; keep one", d.where(), name)
			continue
		}
		seen |= 1 << fi.ord
		fv := v.FieldByIndex(fi.index)
		d.push(name)
		switch {
		case fi.isMap && keyPos != nil:
			field := name
			d.decodeMap(val, fv, func(key string, kn *yaml.Node) { keyPos[field+"."+key] = d.pos(kn) })
		case fi.oneOrList && resolveAlias(val).Kind == yaml.ScalarNode && !isNull(val):
			one := &yaml.Node{Kind: yaml.SequenceNode, Line: val.Line, Column: val.Column, Content: []*yaml.Node{val}}
			d.decode(one, fv)
		default:
			d.decode(val, fv)
			if fi.listPos != nil {
				d.fillListPos(val, v.FieldByIndex(fi.listPos))
			}
			if fi.enum != nil && !isNull(val) {
				d.checkEnum(val, fv, fi.enum)
			}
		}
		d.pop()
	}
}

func (d *decoder) fillListPos(n *yaml.Node, v reflect.Value) {
	n = resolveAlias(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return
	}
	ps := make([]Pos, 0, len(n.Content))
	for _, item := range n.Content {
		if !isNull(item) {
			ps = append(ps, d.pos(item))
		}
	}
	v.Set(reflect.ValueOf(ps))
}

// checkEnum refuses a string field's value that is not one of enum,
// leaving the field unset so that no later check reads it.
func (d *decoder) checkEnum(n *yaml.Node, v reflect.Value, enum []string) {
	n = resolveAlias(n)
	if n.Kind != yaml.ScalarNode || slices.Contains(enum, v.String()) {
		return
	}
	d.errorf(n, "%s: unknown value %q; use %s", d.where(), v.String(), orList(enum))
	v.SetString("")
}

// orList renders values as "a, b or c" for messages.
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
