package grantcheck

import (
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The JSON Schema library costs about 28 allocations and 4-5 µs per call,
// more than the whole budget of a decision. Most tool schemas are a flat
// object of typed properties, so fastSchema handles exactly that subset
// without allocating. It only ever says "valid": any argument it is unsure
// of — and every schema using a keyword outside the subset — goes to the
// library, which stays the authority and produces every error message.
// FuzzFastSchema checks that fast acceptance implies library acceptance.

// fastSchema is a flat object schema: properties, required and a boolean
// additionalProperties.
type fastSchema struct {
	props map[string]*fastProp
	// requiredProps counts the distinct required names that are
	// properties (checked while ranging over the arguments); otherRequired
	// are required names without a property schema, looked up directly.
	requiredProps int
	otherRequired []string
	closed        bool
}

// fastProp is one property limited to type, enum/const of strings, booleans
// and null, string lengths and numeric bounds that float64 holds exactly.
type fastProp struct {
	required               bool
	types                  jsonTypes
	enum                   []any
	hasEnum                bool
	constVal               []any
	minLen, maxLen         int
	min, max, exMin, exMax *float64
}

type jsonTypes uint8

const (
	tNull jsonTypes = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]jsonTypes{
	"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// fastDrafts are the $schema values whose keyword meanings the subset
// shares (draft 6 onwards: numeric exclusiveMinimum, const).
var fastDrafts = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2020-12/schema#": true,
	"https://json-schema.org/draft/2019-09/schema":  true,
	"https://json-schema.org/draft/2019-09/schema#": true,
	"http://json-schema.org/draft-07/schema":        true,
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-06/schema":        true,
	"http://json-schema.org/draft-06/schema#":       true,
}

// annotations are keywords that never affect validation.
var annotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// compileFast returns the fast form of doc (decoded with json.Number), or
// nil when doc uses anything outside the subset.
func compileFast(doc map[string]any) *fastSchema {
	f := &fastSchema{props: map[string]*fastProp{}}
	var required []string
	for k, v := range doc {
		switch {
		case annotations[k]:
		case k == "$schema":
			if s, ok := v.(string); !ok || !fastDrafts[s] {
				return nil
			}
		case k == "type":
			if v != "object" {
				return nil
			}
		case k == "required":
			list, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, r := range list {
				s, ok := r.(string)
				if !ok {
					return nil
				}
				required = append(required, s)
			}
		case k == "additionalProperties":
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			f.closed = !b
		case k == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, ps := range props {
				m, ok := ps.(map[string]any)
				if !ok {
					return nil
				}
				fp := compileFastProp(m)
				if fp == nil {
					return nil
				}
				f.props[name] = fp
			}
		default:
			return nil
		}
	}
	for _, r := range required {
		switch p, ok := f.props[r]; {
		case !ok:
			if !slices.Contains(f.otherRequired, r) {
				f.otherRequired = append(f.otherRequired, r)
			}
		case !p.required:
			p.required = true
			f.requiredProps++
		}
	}
	return f
}

func compileFastProp(m map[string]any) *fastProp {
	p := &fastProp{minLen: -1, maxLen: -1}
	for k, v := range m {
		var ok bool
		switch {
		case annotations[k]:
			ok = true
		case k == "type":
			ok = p.setTypes(v)
		case k == "enum":
			list, isList := v.([]any)
			ok = isList && allScalar(list)
			p.enum, p.hasEnum = list, true
		case k == "const":
			p.constVal = []any{v}
			ok = allScalar(p.constVal)
		case k == "minLength":
			p.minLen, ok = exactCount(v)
		case k == "maxLength":
			p.maxLen, ok = exactCount(v)
		case k == "minimum":
			p.min, ok = exactFloat(v)
		case k == "maximum":
			p.max, ok = exactFloat(v)
		case k == "exclusiveMinimum":
			p.exMin, ok = exactFloat(v)
		case k == "exclusiveMaximum":
			p.exMax, ok = exactFloat(v)
		}
		if !ok {
			return nil
		}
	}
	return p
}

func (p *fastProp) setTypes(v any) bool {
	add := func(x any) bool {
		s, ok := x.(string)
		bit, known := typeBits[s]
		p.types |= bit
		return ok && known
	}
	if list, ok := v.([]any); ok {
		for _, x := range list {
			if !add(x) {
				return false
			}
		}
		return len(list) > 0
	}
	return add(v)
}

// allScalar reports whether every value is a string, boolean or null, the
// values whose equality needs no number semantics.
func allScalar(vals []any) bool {
	for _, v := range vals {
		switch v.(type) {
		case string, bool, nil:
		default:
			return false
		}
	}
	return true
}

func exactCount(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil && i >= 0
}

// exactFloat accepts a bound only when the library, which compares the
// decimal text as a rational with the shortest decimal of the argument,
// must agree with a float64 comparison: the bound's text equals the
// shortest decimal of its float64 as a rational.
func exactFloat(v any) (*float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, false
	}
	text, ok1 := new(big.Rat).SetString(string(n))
	short, ok2 := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok1 || !ok2 || text.Cmp(short) != 0 {
		return nil, false
	}
	return &f, true
}

// accepts reports true only when args certainly satisfy the schema.
func (f *fastSchema) accepts(args map[string]any) bool {
	for _, r := range f.otherRequired {
		if _, ok := args[r]; !ok {
			return false
		}
	}
	present := 0
	for k, v := range args {
		p, ok := f.props[k]
		if !ok {
			if f.closed {
				return false
			}
			continue
		}
		if !p.accepts(v) {
			return false
		}
		if p.required {
			present++
		}
	}
	return present == f.requiredProps
}

func (p *fastProp) accepts(v any) bool {
	var t jsonTypes
	switch x := v.(type) {
	case nil:
		t = tNull
	case bool:
		t = tBool
	case string:
		t = tString
		if p.minLen >= 0 || p.maxLen >= 0 {
			n := utf8.RuneCountInString(x)
			if (p.minLen >= 0 && n < p.minLen) || (p.maxLen >= 0 && n > p.maxLen) {
				return false
			}
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		t = tNumber
		if x == math.Trunc(x) {
			t |= tInteger
		}
		if (p.min != nil && x < *p.min) || (p.max != nil && x > *p.max) ||
			(p.exMin != nil && x <= *p.exMin) || (p.exMax != nil && x >= *p.exMax) {
			return false
		}
	case map[string]any:
		t = tObject
	case []any:
		t = tArray
	default:
		return false
	}
	if p.types != 0 {
		want := p.types
		if want&tNumber != 0 {
			want |= tInteger
		}
		if t&want == 0 {
			return false
		}
	}
	if p.constVal != nil && !scalarIn(v, p.constVal) {
		return false
	}
	if p.hasEnum && !scalarIn(v, p.enum) {
		return false
	}
	return true
}

func scalarIn(v any, vals []any) bool {
	for _, e := range vals {
		switch x := v.(type) {
		case string:
			if s, ok := e.(string); ok && s == x {
				return true
			}
		case bool:
			if b, ok := e.(bool); ok && b == x {
				return true
			}
		case nil:
			if e == nil {
				return true
			}
		}
	}
	return false
}
