package workspace

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxDepth bounds how deeply values may nest (aliases included). Real
// workspaces stay below a few dozen levels; the bound keeps recursion, and
// so the stack, small whatever the input.
const maxDepth = 1000

// minAliasAllowance is how many values alias expansion may add to a small
// document before decoding stops; larger documents may grow by their own
// size. This bounds time and memory against "billion laughs" inputs.
const minAliasAllowance = 250_000

// maxErrors is how many errors one load reports before it stops.
const maxErrors = 500

// decoder turns a yaml.Node tree into the typed declarations, strictly:
// unknown keys, duplicate keys and wrong kinds are recorded with their
// position and decoding carries on, so one run reports every problem.
type decoder struct {
	file string
	errs ErrorList
	// structs caches the YAML layout of each struct type decoded.
	structs map[reflect.Type]*structInfo
	// budget is how many more values may be decoded; aliases re-visit their
	// anchor's values, so this is what bounds alias expansion.
	budget    int
	exhausted bool
	depth     int
	// expanding holds the anchors whose alias is being decoded, to refuse an
	// anchor that contains an alias of itself.
	expanding map[*yaml.Node]bool
	// path is where the value being decoded sits, rendered only when an
	// error names it.
	path []pathElem
	// decls are the declarations being decoded, outermost first, so that
	// an error marks each Damaged (see damage.go).
	decls []declMark
	// unread is the Workspace.Unread of the document being decoded.
	unread *Unread
}

// newDecoder returns a decoder for the document rooted at root, parsed
// from data, with an expansion budget proportional to the document's size.
func newDecoder(file string, data []byte, root *yaml.Node) *decoder {
	return &decoder{
		file:      file,
		structs:   map[reflect.Type]*structInfo{},
		budget:    expansionBudget(data, root),
		expanding: map[*yaml.Node]bool{},
	}
}

// expansionBudget is how many values decoding root may visit: twice the
// nodes written plus as many again (at least minAliasAllowance). Without
// aliases no node is visited more than twice (a one-or-list field wraps
// its value once), so the budget cannot run out; a YAML alias is written
// *name, so a file without a '*' has none and is not walked to be counted.
func expansionBudget(data []byte, root *yaml.Node) int {
	if bytes.IndexByte(data, '*') < 0 {
		return math.MaxInt
	}
	n := countNodes(root)
	return 2*n + max(n, minAliasAllowance)
}

// countNodes counts the nodes written in a document, not following aliases.
func countNodes(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch)
	}
	return c
}

func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

// errorf records a problem at n. Past maxErrors, decoding stops: a file
// that wrong is fixed from the first errors, and aliases cannot multiply
// errors into a flood.
func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	if len(d.errs) >= maxErrors {
		d.exhausted = true
		return
	}
	d.errs = append(d.errs, &Error{Pos: d.pos(n), Msg: fmt.Sprintf(format, args...)})
	d.damage()
}

var (
	posType       = reflect.TypeFor[Pos]()
	keyPosType    = reflect.TypeFor[map[string]Pos]()
	posListType   = reflect.TypeFor[[]Pos]()
	secretRefType = reflect.TypeFor[SecretRef]()
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

// isNull reports whether n (aliases followed) is an explicit or empty null.
func isNull(n *yaml.Node) bool {
	n = resolveAlias(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// enter starts decoding n: it follows an alias (refusing one inside its own
// anchor), charges the expansion budget and the depth bound, and returns the
// node to decode, or nil when it must not be decoded. Every enter that
// returns a node must be paired with leave(n) on the original node.
func (d *decoder) enter(n *yaml.Node) *yaml.Node {
	if n == nil || d.exhausted {
		return nil
	}
	target := n
	if n.Kind == yaml.AliasNode {
		target = resolveAlias(n)
		if target == nil {
			return nil
		}
		if d.expanding[target] {
			d.errorf(n, "alias *%s is used inside its own anchor &%s; a value cannot contain itself", n.Value, n.Value)
			return nil
		}
		d.expanding[target] = true
	}
	d.budget--
	d.depth++
	switch {
	case d.budget < 0:
		d.exhausted = true
		d.errorf(n, "this file expands to too many values through YAML aliases (*name); write the repeated parts out or alias less")
	case d.depth > maxDepth:
		d.errorf(n, "values are nested more than %d levels deep; flatten this declaration", maxDepth)
	default:
		return target
	}
	d.leave(n)
	return nil
}

// leave ends what enter(n) started.
func (d *decoder) leave(n *yaml.Node) {
	d.depth--
	if n.Kind == yaml.AliasNode {
		delete(d.expanding, resolveAlias(n))
	}
}

// key returns a mapping key's text, or records why it cannot be used: keys
// must be plain scalars, and YAML merge keys (<<) are refused so that every
// field is written where it applies.
func (d *decoder) key(k *yaml.Node) (string, bool) {
	k = resolveAlias(k)
	switch {
	case k == nil:
		return "", false
	case k.Kind != yaml.ScalarNode:
		d.errorf(k, "%s: keys must be plain strings, not a %s", d.where(), kindName(k))
		return "", false
	case k.Tag == "!!merge":
		d.errorf(k, "YAML merge keys (<<) are not supported in %s; write the fields out", d.where())
		return "", false
	}
	return k.Value, true
}

// decode fills v (a settable value) from n, recording problems in d.
func (d *decoder) decode(n *yaml.Node, v reflect.Value) {
	orig := n
	if n = d.enter(n); n == nil {
		return
	}
	defer d.leave(orig)
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	d.decodeValue(n, v)
}

// decodeValue is decode for a node already entered.
func (d *decoder) decodeValue(n *yaml.Node, v reflect.Value) {
	if v.Kind() == reflect.Struct {
		if idx := d.structInfo(v.Type()).damaged; idx != nil {
			d.decls = append(d.decls, declMark{v: v, flag: idx, depth: len(d.path)})
			defer func() { d.decls = d.decls[:len(d.decls)-1] }()
		}
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			nd.decodeNode(d, n)
			return
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		d.decodeStruct(n, v)
	case reflect.Slice:
		d.decodeSlice(n, v)
	case reflect.Map:
		d.decodeMap(n, v, nil)
	case reflect.String:
		if s, ok := d.scalar(n); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if s, ok := d.scalar(n); ok {
			b, err := strconv.ParseBool(s)
			if err != nil || n.Tag != "!!bool" {
				d.errorf(n, "%s must be true or false, not %q", d.where(), s)
				return
			}
			v.SetBool(b)
		}
	case reflect.Int:
		if s, ok := d.scalar(n); ok {
			i, err := strconv.Atoi(s)
			if err != nil || n.Tag != "!!int" {
				d.errorf(n, "%s must be a whole number, not %q", d.where(), s)
				return
			}
			v.SetInt(int64(i))
		}
	case reflect.Interface:
		if val, ok := d.anyValue(n); ok && val != nil {
			v.Set(reflect.ValueOf(val))
		}
	default:
		panic(fmt.Sprintf("workspace: no decoder for %s", v.Type()))
	}
}

func (d *decoder) decodeSlice(n *yaml.Node, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s must be a list (for example [a, b]), not a %s", d.where(), kindName(n))
		return
	}
	// Empty items are reported and left out, so that no later check meets a
	// nil declaration; fillListPos skips them the same way.
	// A declaration that could not be read at all (a list item that is not
	// a mapping) is left out too, once its error is recorded.
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	posIndex := d.declPos(v.Type().Elem())
	kept := 0
	for i, item := range n.Content {
		d.pushIndex(i)
		if isNull(item) {
			d.errorf(item, "%s is empty; remove the empty list item or give it a value", d.where())
		} else {
			e := s.Index(kept)
			d.decode(item, e)
			if posIndex != nil && (e.IsNil() || e.Elem().FieldByIndex(posIndex).IsZero()) {
				e.SetZero()
				d.damage() // the error was recorded; the declaration is lost
			} else {
				kept++
			}
		}
		d.pop()
	}
	v.Set(s.Slice(0, kept))
}

// declPos returns the index of the Pos field of a pointer-to-struct type,
// which decoding sets on every declaration it reads; nil for other types.
func (d *decoder) declPos(t reflect.Type) []int {
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	return d.structInfo(t.Elem()).pos
}

// scalar returns a scalar node's text, or records that a scalar was expected.
func (d *decoder) scalar(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.errorf(n, "%s must be a single value, not a %s", d.where(), kindName(n))
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

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func (d *decoder) decodeMap(n *yaml.Node, v reflect.Value, onKey func(string, *yaml.Node)) {
	n = resolveAlias(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of keys to values, not a %s", d.where(), kindName(n))
		return
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		panic("workspace: map keys must be strings")
	}
	elem := t.Elem()
	m := reflect.MakeMapWithSize(t, len(n.Content)/2)
	// ev is reused for every entry: SetMapIndex copies it into the map.
	ev := reflect.New(elem).Elem()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		name, ok := d.key(k)
		if !ok {
			continue
		}
		kv := reflect.ValueOf(name).Convert(t.Key())
		if m.MapIndex(kv).IsValid() {
			d.errorf(k, "%s: key %q is given twice; keep one", d.where(), name)
			continue
		}
		d.push(name)
		if elem.Kind() != reflect.Interface && isNull(val) {
			hint := ""
			if elem == reflect.TypeFor[string]() {
				hint = ` (write "" for an empty string)`
			}
			d.errorf(k, "%s has no value; give it one%s", d.where(), hint)
			d.pop()
			continue
		}
		ev.SetZero()
		d.decode(val, ev)
		d.pop()
		if onKey != nil {
			onKey(name, k)
		}
		if ev.Kind() == reflect.Pointer {
			if ev.IsNil() {
				ev.Set(reflect.New(elem.Elem()))
			}
			if f := ev.Elem().FieldByName("Name"); f.IsValid() && f.Kind() == reflect.String {
				f.SetString(name)
			}
		}
		m.SetMapIndex(kv, ev)
	}
	v.Set(m)
}

func reflectValue(p any) reflect.Value { return reflect.ValueOf(p).Elem() }
