package strictjson

// The parser as it was before the allocation-free check path (one
// parser building and checking alike), kept as the oracle the current one
// is held to: same documents accepted, same values, same errors at the
// same offsets (differential_test.go).

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse decodes data as exactly one JSON value. Objects become
// map[string]any, arrays []any, numbers json.Number (literal text),
// strings string, true/false bool, null nil.
func refParse(data []byte) (any, error) {
	p := refParser{data: data}
	p.skipSpace()
	v, err := p.value(0, true)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// Members splits a JSON object into its members in written order, each
// value checked under the strict rules but kept as raw bytes. Duplicate
// and case-variant keys are refused at every depth.
func refMembers(data []byte) ([]Member, error) {
	p := refParser{data: data}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, p.errorf("expected a JSON object")
	}
	var out []Member
	err := p.object(0, func(key string, start, end int) {
		out = append(out, Member{Key: key, Value: data[start:end]})
	})
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return out, nil
}

// LaxMembers splits a JSON object into its members like Members, with the
// strict rules applied to its own keys only: its values are delimited and
// their syntax checked, but duplicate or case-variant keys, invalid UTF-8
// and unpaired surrogates inside them are left for a later strict parse.
// It lets an envelope be read when one of its values must be refused by
// whoever decides on it (and who then says why, and audits it); callers
// must parse such a value strictly before they use it.
func refLaxMembers(data []byte) ([]Member, error) { return refLaxMembersWith(data, false) }

// ScanMembers is LaxMembers with no strict rule applied to the object's
// own keys either: duplicate and case-variant keys are all returned, in
// written order. It only locates members; a caller must judge both the
// ambiguity and the value it takes.
func refScanMembers(data []byte) ([]Member, error) { return refLaxMembersWith(data, true) }

func refLaxMembersWith(data []byte, anyKeys bool) ([]Member, error) {
	p := refParser{data: data, lax: true, laxKeys: anyKeys}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, p.errorf("expected a JSON object")
	}
	var out []Member
	err := p.object(0, func(key string, start, end int) {
		out = append(out, Member{Key: key, Value: data[start:end]})
	})
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, p.errorf("unexpected data after the JSON value")
	}
	return out, nil
}

// Valid reports whether data is one JSON value under the strict rules.
func refValid(data []byte) error {
	p := refParser{data: data}
	p.skipSpace()
	if _, err := p.value(0, false); err != nil {
		return err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return p.errorf("unexpected data after the JSON value")
	}
	return nil
}

type refParser struct {
	data []byte
	i    int
	path []refSeg
	// lax applies the strict rules to the keys of the outermost object
	// only (LaxMembers); laxKeys not even there (ScanMembers).
	lax, laxKeys bool
}

// seg is one step of the path to the value being parsed: an object key
// or an array index. It is formatted only when an error is reported.
type refSeg struct {
	key string
	idx int
}

func (p *refParser) errorf(format string, args ...any) error {
	return &Error{Path: p.pathString(), Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *refParser) pathString() string {
	if len(p.path) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range p.path {
		b.WriteByte('/')
		if s.idx >= 0 {
			fmt.Fprint(&b, s.idx)
		} else {
			b.WriteString(escapePointer(s.key))
		}
	}
	return b.String()
}

func (p *refParser) skipSpace() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value parses one value at p.i (leading space already skipped); build
// says whether to construct the Go value or only check it.
func (p *refParser) value(depth int, build bool) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= MaxDepth {
			return nil, p.errorf("nested deeper than %d levels", MaxDepth)
		}
		var m map[string]any
		if build {
			m = map[string]any{}
		}
		err := p.objectWith(depth, func(key string) error {
			v, err := p.value(depth+1, build)
			if err == nil && build {
				m[key] = v
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if !build {
			return nil, nil
		}
		return m, nil
	case c == '[':
		if depth >= MaxDepth {
			return nil, p.errorf("nested deeper than %d levels", MaxDepth)
		}
		return p.array(depth, build)
	case c == '"':
		s, err := p.str(!p.lax)
		if err != nil {
			return nil, err
		}
		if !build {
			return nil, nil
		}
		return s, nil
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		if !build {
			return nil, nil
		}
		return n, nil
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.errorf("invalid character %q looking for a JSON value", p.data[p.i])
}

func (p *refParser) literal(word string) error {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return p.errorf("invalid literal; expected %s", word)
	}
	p.i += len(word)
	return nil
}

// object parses an object whose values are only checked, reporting each
// member's key and value span.
func (p *refParser) object(depth int, member func(key string, start, end int)) error {
	return p.objectWith(depth, func(key string) error {
		start := p.i
		if _, err := p.value(depth+1, false); err != nil {
			return err
		}
		member(key, start, p.i)
		return nil
	})
}

// objectWith parses an object at p.i, calling val with p.i at each
// member's value; it refuses duplicate keys and keys equal but for case.
func (p *refParser) objectWith(depth int, val func(key string) error) error {
	p.i++ // '{'
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return nil
	}
	var seen refKeySet
	for {
		if p.i >= len(p.data) || p.data[p.i] != '"' {
			return p.errorf("expected a string key in an object")
		}
		keyAt := p.i
		strict := !p.lax || (depth == 0 && !p.laxKeys)
		key, err := p.str(strict)
		if err != nil {
			return err
		}
		if k, clash := seen.add(key); clash && strict {
			p.i = keyAt
			if k == key {
				return p.errorf("duplicate key %q", key)
			}
			return p.errorf("keys %q and %q differ only in case; send one of them", k, key)
		}
		p.skipSpace()
		if p.i >= len(p.data) || p.data[p.i] != ':' {
			return p.errorf("expected ':' after the key %q", key)
		}
		p.i++
		p.skipSpace()
		p.path = append(p.path, refSeg{key: key, idx: -1})
		if err := val(key); err != nil {
			return err
		}
		p.path = p.path[:len(p.path)-1]
		p.skipSpace()
		if p.i >= len(p.data) {
			return p.errorf("unexpected end of JSON input in an object")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case '}':
			p.i++
			return nil
		default:
			return p.errorf("expected ',' or '}' in an object")
		}
	}
}

func (p *refParser) array(depth int, build bool) (any, error) {
	p.i++ // '['
	p.skipSpace()
	var out []any
	if build {
		out = []any{}
	}
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return out, nil
	}
	for n := 0; ; n++ {
		p.path = append(p.path, refSeg{idx: n})
		v, err := p.value(depth+1, build)
		if err != nil {
			return nil, err
		}
		p.path = p.path[:len(p.path)-1]
		if build {
			out = append(out, v)
		}
		p.skipSpace()
		if p.i >= len(p.data) {
			return nil, p.errorf("unexpected end of JSON input in an array")
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.skipSpace()
		case ']':
			p.i++
			return out, nil
		default:
			return nil, p.errorf("expected ',' or ']' in an array")
		}
	}
}

// number scans a JSON number and returns its literal text.
func (p *refParser) number() (json.Number, error) {
	start := p.i
	d := p.data
	if p.i < len(d) && d[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(d) && d[p.i] == '0':
		p.i++
	case p.i < len(d) && d[p.i] >= '1' && d[p.i] <= '9':
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	default:
		return "", p.errorf("invalid number")
	}
	if p.i < len(d) && d[p.i] == '.' {
		p.i++
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return "", p.errorf("invalid number: digits must follow the decimal point")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	if p.i < len(d) && (d[p.i] == 'e' || d[p.i] == 'E') {
		p.i++
		if p.i < len(d) && (d[p.i] == '+' || d[p.i] == '-') {
			p.i++
		}
		if p.i >= len(d) || d[p.i] < '0' || d[p.i] > '9' {
			return "", p.errorf("invalid number: digits must follow the exponent")
		}
		for p.i < len(d) && d[p.i] >= '0' && d[p.i] <= '9' {
			p.i++
		}
	}
	return json.Number(d[start:p.i]), nil
}

// str scans a JSON string at p.i and returns its value. Unescaped control
// characters are refused; strict also refuses invalid UTF-8 and unpaired
// surrogate escapes (otherwise they become U+FFFD in the value returned).
func (p *refParser) str(strict bool) (string, error) {
	d := p.data
	p.i++ // opening quote
	start := p.i
	// Fast path: no escapes.
	for p.i < len(d) {
		c := d[p.i]
		if c == '"' {
			s := d[start:p.i]
			if strict && !utf8.Valid(s) {
				return "", p.errorf("string is not valid UTF-8")
			}
			p.i++
			return string(s), nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", p.errorf("control character %#02x must be escaped in a string", c)
		}
		p.i++
	}
	buf := append([]byte(nil), d[start:p.i]...)
	for p.i < len(d) {
		c := d[p.i]
		switch {
		case c == '"':
			if strict && !utf8.Valid(buf) {
				return "", p.errorf("string is not valid UTF-8")
			}
			p.i++
			return string(buf), nil
		case c < 0x20:
			return "", p.errorf("control character %#02x must be escaped in a string", c)
		case c != '\\':
			buf = append(buf, c)
			p.i++
			continue
		}
		if p.i+1 >= len(d) {
			break
		}
		e := d[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.errorf("invalid \\u escape in a string")
			}
			if utf16.IsSurrogate(r) && !strict {
				r = utf8.RuneError
			} else if utf16.IsSurrogate(r) {
				if r >= 0xdc00 || p.i+1 >= len(d) || d[p.i] != '\\' || d[p.i+1] != 'u' {
					return "", p.errorf("unpaired surrogate \\u%04x in a string", r)
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok || r2 < 0xdc00 || r2 > 0xdfff {
					return "", p.errorf("unpaired surrogate \\u%04x in a string", r)
				}
				r = utf16.DecodeRune(r, r2)
			}
			buf = utf8.AppendRune(buf, r)
		default:
			p.i--
			return "", p.errorf("invalid escape \\%c in a string", e)
		}
	}
	return "", p.errorf("unexpected end of JSON input in a string")
}

func (p *refParser) hex4() (rune, bool) {
	if len(p.data)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}

// refKeySet finds a key equal to another, or equal but for case, among an
// object's keys: a linear scan for the usual few keys, a map keyed by the
// case-folded form beyond that (so a hostile object of many keys costs
// linear time, not quadratic).
type refKeySet struct {
	small  []string
	folded map[string]string
}

const refKeySetSmall = 8

// add records key and returns an earlier key it clashes with.
func (s *refKeySet) add(key string) (string, bool) {
	if s.folded == nil {
		for _, k := range s.small {
			if k == key || strings.EqualFold(k, key) {
				return k, true
			}
		}
		if len(s.small) < refKeySetSmall {
			s.small = append(s.small, key)
			return "", false
		}
		s.folded = make(map[string]string, 2*refKeySetSmall)
		for _, k := range s.small {
			s.folded[FoldKey(k)] = k
		}
	}
	f := FoldKey(key)
	if k, ok := s.folded[f]; ok {
		return k, true
	}
	s.folded[f] = key
	return "", false
}
