// Package strictjson parses JSON the way a governance decision needs it:
// once, strictly, with nothing left for a second parser to read
// differently. It refuses what other decoders disagree about — duplicate
// keys (Go keeps the last, others the first), keys that differ only in
// case (Go's encoding/json binds them to the same struct field), invalid
// UTF-8 and lone surrogate escapes (replaced by some decoders, kept by
// others), trailing data — and it keeps every number as its literal text
// (json.Number), so no float rounding separates what was decided from what
// is executed.
//
// Trust boundary: the input is untrusted bytes from an MCP client or
// server. Everything Parse returns is safe to decide on and to re-encode
// with AppendCanonical, which is the only form toolgate forwards.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, so a hostile document
// cannot exhaust the stack.
const MaxDepth = 128

// Error says what is wrong with a document and where: Path is the
// JSON-pointer-like location of the value ("" for the root, "/arguments/n"),
// Offset the byte offset in the input.
type Error struct {
	Path   string
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s (at byte %d)", e.Msg, e.Offset)
	}
	return fmt.Sprintf("%s at %s (byte %d)", e.Msg, e.Path, e.Offset)
}

// Member is one member of a JSON object: its key and the exact bytes of
// its value (already checked under the strict rules).
type Member struct {
	Key   string
	Value []byte
}

// Parse decodes data as exactly one JSON value. Objects become
// map[string]any, arrays []any, numbers json.Number (literal text),
// strings string, true/false bool, null nil.
func Parse(data []byte) (any, error) {
	p := parser{data: data}
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

// ParseObject is Parse for a document that must be a JSON object.
func ParseObject(data []byte) (map[string]any, error) {
	v, err := Parse(data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Msg: "expected a JSON object, got " + Kind(v)}
	}
	return m, nil
}

// Members splits a JSON object into its members in written order, each
// value checked under the strict rules but kept as raw bytes. Duplicate
// and case-variant keys are refused at every depth.
func Members(data []byte) ([]Member, error) { return members(&parser{data: data}) }

// Lookup returns the value of the member key of the JSON object data,
// with the whole object checked under the strict rules as Members checks
// it, without building its members: found is false when key is absent.
// It is how a relay reads one field of every message it passes on.
func Lookup(data []byte, key string) (value []byte, found bool, err error) {
	p := parser{data: data}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, false, p.errorf("expected a JSON object")
	}
	err = p.object(0, func(k []byte, start, end int) {
		if !found && string(k) == key {
			value, found = data[start:end], true
		}
	})
	if err != nil {
		return nil, false, err
	}
	p.skipSpace()
	if p.i != len(p.data) {
		return nil, false, p.errorf("unexpected data after the JSON value")
	}
	return value, found, nil
}

// LaxMembers splits a JSON object into its members like Members, with the
// strict rules applied to its own keys only: its values are delimited and
// their syntax checked, but duplicate or case-variant keys, invalid UTF-8
// and unpaired surrogates inside them are left for a later strict parse.
// It lets an envelope be read when one of its values must be refused by
// whoever decides on it (and who then says why, and audits it); callers
// must parse such a value strictly before they use it.
func LaxMembers(data []byte) ([]Member, error) { return laxMembers(data, false) }

// ScanMembers is LaxMembers with no strict rule applied to the object's
// own keys either: duplicate and case-variant keys are all returned, in
// written order. It only locates members; a caller must judge both the
// ambiguity and the value it takes.
func ScanMembers(data []byte) ([]Member, error) { return laxMembers(data, true) }

func laxMembers(data []byte, anyKeys bool) ([]Member, error) {
	return members(&parser{data: data, lax: true, laxKeys: anyKeys})
}

// members splits the object p reads into its members.
func members(p *parser) ([]Member, error) {
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != '{' {
		return nil, p.errorf("expected a JSON object")
	}
	out := make([]Member, 0, 8)
	err := p.object(0, func(key []byte, start, end int) {
		out = append(out, Member{Key: string(key), Value: p.data[start:end]})
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
func Valid(data []byte) error {
	p := parser{data: data}
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

// Kind names the JSON type of a value Parse returned, for error messages.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

type parser struct {
	data []byte
	i    int
	path path
	// lax applies the strict rules to the keys of the outermost object
	// only (LaxMembers); laxKeys not even there (ScanMembers).
	lax, laxKeys bool
}

// seg is one step of the path to the value being parsed: the offset of an
// object key (its opening quote) or an array index. The key is decoded,
// and the path formatted, only when an error is reported.
type seg struct {
	keyAt int
	idx   int
}

// pathSmall is how deep a path is kept in the parser itself: a message's
// usual depth, so parsing one allocates nothing for its path.
const pathSmall = 16

// path is the stack of segs to the value being parsed: the first
// pathSmall inline, any deeper ones in more.
type path struct {
	n     int
	small [pathSmall]seg
	more  []seg
}

func (pa *path) push(s seg) {
	if pa.n < pathSmall {
		pa.small[pa.n] = s
	} else {
		pa.more = append(pa.more[:pa.n-pathSmall], s)
	}
	pa.n++
}

func (pa *path) pop() { pa.n-- }

func (pa *path) at(i int) seg {
	if i < pathSmall {
		return pa.small[i]
	}
	return pa.more[i-pathSmall]
}

func (p *parser) errorf(format string, args ...any) error {
	return &Error{Path: p.pathString(), Offset: p.i, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) pathString() string {
	if p.path.n == 0 {
		return ""
	}
	var b strings.Builder
	for i := range p.path.n {
		s := p.path.at(i)
		b.WriteByte('/')
		if s.idx >= 0 {
			fmt.Fprint(&b, s.idx)
		} else {
			k := parser{data: p.data, i: s.keyAt}
			key, _ := k.str(false) // a key already read, so it decodes
			b.WriteString(escapePointer(key))
		}
	}
	return b.String()
}

func (p *parser) skipSpace() {
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
// says whether to construct the Go value or only check it. Checking
// allocates nothing for the common document (no escaped keys, objects of
// at most keySetSmall members), which is what lets a relay check every
// message it passes on.
func (p *parser) value(depth int, build bool) (any, error) {
	if p.i >= len(p.data) {
		return nil, p.errorf("unexpected end of JSON input")
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= MaxDepth {
			return nil, p.errorf("nested deeper than %d levels", MaxDepth)
		}
		if build {
			return p.buildObject(depth)
		}
		return nil, p.object(depth, nil)
	case c == '[':
		if depth >= MaxDepth {
			return nil, p.errorf("nested deeper than %d levels", MaxDepth)
		}
		return p.array(depth, build)
	case c == '"':
		if build {
			s, err := p.str(!p.lax)
			if err != nil {
				return nil, err
			}
			return s, nil
		}
		_, _, err := p.scanStr(!p.lax)
		return nil, err
	case c == '-' || (c >= '0' && c <= '9'):
		start, err := p.number()
		if err != nil || !build {
			return nil, err
		}
		return json.Number(p.data[start:p.i]), nil
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.errorf("invalid character %q looking for a JSON value", p.data[p.i])
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.i < len(word) || string(p.data[p.i:p.i+len(word)]) != word {
		return p.errorf("invalid literal; expected %s", word)
	}
	p.i += len(word)
	return nil
}

// object checks an object at p.i; member, when set, is told each
// member's key and value span (Members).
func (p *parser) object(depth int, member func(key []byte, start, end int)) error {
	p.i++ // '{'
	p.skipSpace()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return nil
	}
	var seen keySet
	for {
		key, err := p.key(depth, &seen)
		if err != nil {
			return err
		}
		start := p.i
		if _, err := p.value(depth+1, false); err != nil {
			return err
		}
		if member != nil {
			member(key, start, p.i)
		}
		if done, err := p.next(); done || err != nil {
			return err
		}
	}
}

// buildObject parses an object at p.i into a map.
func (p *parser) buildObject(depth int) (map[string]any, error) {
	p.i++ // '{'
	p.skipSpace()
	m := map[string]any{}
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return m, nil
	}
	var seen keySet
	for {
		key, err := p.key(depth, &seen)
		if err != nil {
			return nil, err
		}
		v, err := p.value(depth+1, true)
		if err != nil {
			return nil, err
		}
		m[string(key)] = v
		if done, err := p.next(); err != nil {
			return nil, err
		} else if done {
			return m, nil
		}
	}
}

// key reads one member's key and the ':' after it, refuses a key equal
// to an earlier one or equal but for case, and enters the member in the
// path (next leaves it). The key returned is the decoded key: the input's
// own bytes unless it holds escapes.
func (p *parser) key(depth int, seen *keySet) ([]byte, error) {
	if p.i >= len(p.data) || p.data[p.i] != '"' {
		return nil, p.errorf("expected a string key in an object")
	}
	keyAt := p.i
	strict := !p.lax || (depth == 0 && !p.laxKeys)
	key, escaped, err := p.scanStr(strict)
	if err != nil {
		return nil, err
	}
	if escaped {
		k := parser{data: p.data, i: keyAt}
		s, _ := k.str(strict) // scanned already, so it decodes
		key = []byte(s)
	}
	if strict {
		if k, clash := seen.add(key); clash {
			p.i = keyAt
			if string(k) == string(key) {
				return nil, p.errorf("duplicate key %q", key)
			}
			return nil, p.errorf("keys %q and %q differ only in case; send one of them", k, key)
		}
	}
	p.skipSpace()
	if p.i >= len(p.data) || p.data[p.i] != ':' {
		return nil, p.errorf("expected ':' after the key %q", key)
	}
	p.i++
	p.skipSpace()
	p.path.push(seg{keyAt: keyAt, idx: -1})
	return key, nil
}

// next leaves the member just read and moves to the next one; done at
// the object's end.
func (p *parser) next() (done bool, err error) {
	p.path.pop()
	p.skipSpace()
	if p.i >= len(p.data) {
		return true, p.errorf("unexpected end of JSON input in an object")
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		p.skipSpace()
		return false, nil
	case '}':
		p.i++
		return true, nil
	}
	return true, p.errorf("expected ',' or '}' in an object")
}

func (p *parser) array(depth int, build bool) (any, error) {
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
		p.path.push(seg{idx: n})
		v, err := p.value(depth+1, build)
		if err != nil {
			return nil, err
		}
		p.path.pop()
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

// number scans a JSON number (the grammar is scanNumber's) and returns
// where its literal text starts (it ends at p.i).
func (p *parser) number() (int, error) {
	start := p.i
	_, end, problem := scanNumber(p.data, p.i)
	p.i = end
	if problem != "" {
		return 0, p.errorf("%s", problem)
	}
	return start, nil
}

// scanStr checks a JSON string at p.i as str does, with the same errors at
// the same offsets, without decoding it: it returns the bytes between the
// quotes and whether they hold escapes. The UTF-8 check on those bytes is
// the check on the decoded value: escapes are ASCII, and what they decode
// to is whole UTF-8 characters, so neither can join or split a multi-byte
// sequence around them.
func (p *parser) scanStr(strict bool) ([]byte, bool, error) {
	d := p.data
	p.i++ // opening quote
	start := p.i
	ascii := true // no UTF-8 check needed
	for p.i < len(d) {
		c := d[p.i]
		if c == '"' {
			s := d[start:p.i]
			if strict && !ascii && !utf8.Valid(s) {
				return nil, false, p.errorf("string is not valid UTF-8")
			}
			p.i++
			return s, false, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return nil, false, p.errorf("control character %#02x must be escaped in a string", c)
		}
		ascii = ascii && c < utf8.RuneSelf
		p.i++
	}
	for p.i < len(d) {
		c := d[p.i]
		switch {
		case c == '"':
			s := d[start:p.i]
			if strict && !ascii && !utf8.Valid(s) {
				return nil, false, p.errorf("string is not valid UTF-8")
			}
			p.i++
			return s, true, nil
		case c < 0x20:
			return nil, false, p.errorf("control character %#02x must be escaped in a string", c)
		case c != '\\':
			ascii = ascii && c < utf8.RuneSelf
			p.i++
			continue
		}
		if p.i+1 >= len(d) {
			break
		}
		e := d[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return nil, false, p.errorf("invalid \\u escape in a string")
			}
			if strict && utf16.IsSurrogate(r) {
				if r >= 0xdc00 || p.i+1 >= len(d) || d[p.i] != '\\' || d[p.i+1] != 'u' {
					return nil, false, p.errorf("unpaired surrogate \\u%04x in a string", r)
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok || r2 < 0xdc00 || r2 > 0xdfff {
					return nil, false, p.errorf("unpaired surrogate \\u%04x in a string", r)
				}
			}
		default:
			p.i--
			return nil, false, p.errorf("invalid escape \\%c in a string", e)
		}
	}
	return nil, false, p.errorf("unexpected end of JSON input in a string")
}

// str scans a JSON string at p.i and returns its value. Unescaped control
// characters are refused; strict also refuses invalid UTF-8 and unpaired
// surrogate escapes (otherwise they become U+FFFD in the value returned).
func (p *parser) str(strict bool) (string, error) {
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

func (p *parser) hex4() (rune, bool) {
	r, ok := hex4(p.data[p.i:])
	if ok {
		p.i += 4
	}
	return r, ok
}

// hex4 reads the four hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
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
	return r, true
}

func escapePointer(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// keySet finds a key equal to another, or equal but for case, among an
// object's keys: a linear scan for the usual few keys (held in place, so
// checking allocates nothing), a map keyed by the case-folded form beyond
// that (so a hostile object of many keys costs linear time, not
// quadratic).
type keySet struct {
	n      int
	small  [keySetSmall][]byte
	folded map[string][]byte
}

const keySetSmall = 8

// add records key and returns an earlier key it clashes with.
func (s *keySet) add(key []byte) ([]byte, bool) {
	if s.folded == nil {
		for _, k := range s.small[:s.n] {
			if string(k) == string(key) || bytes.EqualFold(k, key) {
				return k, true
			}
		}
		if s.n < keySetSmall {
			s.small[s.n] = key
			s.n++
			return nil, false
		}
		s.folded = make(map[string][]byte, 2*keySetSmall)
		for _, k := range s.small[:s.n] {
			s.folded[FoldKey(string(k))] = k
		}
	}
	f := FoldKey(string(key))
	if k, ok := s.folded[f]; ok {
		return k, true
	}
	s.folded[f] = key
	return nil, false
}

// FoldKey maps a key to one representative of its case-folding class:
// FoldKey(a) == FoldKey(b) exactly when strings.EqualFold(a, b).
func FoldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToUpper(s) // the smallest rune of each ASCII letter's orbit is its upper case
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is the smallest rune of r's simple case-folding orbit.
func foldRune(r rune) rune {
	m := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < m {
			m = f
		}
	}
	return m
}
