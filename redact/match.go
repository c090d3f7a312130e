package redact

import (
	"encoding/json"
	"sort"
)

// span is one match: bytes [from, to) of the text belong to credential name.
type span struct {
	from, to int
	name     string
	// quoted marks are written as a JSON string (a match inside a list of
	// numbers, where a bare mark would break the JSON).
	quoted bool
}

// bigrams is a set of two-byte sequences (lowercase).
type bigrams [1 << 16 / 64]uint64

// setFold adds c0 c1 (lowercase) in every ASCII case, so a scan tests
// the bytes as written.
func (b *bigrams) setFold(c0, c1 byte) {
	for _, x := range cases(c0) {
		for _, y := range cases(c1) {
			b.add(uint(x)<<8 | uint(y))
		}
	}
}

// cases are c and, for a lowercase ASCII letter, its uppercase.
func cases(c byte) []byte {
	if c >= 'a' && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

func (b *bigrams) add(k uint) { b[k/64] |= 1 << (k % 64) }

// quad hashes four (lowercase) bytes into a bigrams index.
func quad(c0, c1, c2, c3 byte) uint {
	return uint((uint32(c0)<<24|uint32(c1)<<16|uint32(c2)<<8|uint32(c3))*2654435761) >> 16
}

func (b *bigrams) has(k uint) bool { return b[k/64]&(1<<(k%64)) != 0 }

// lowerTab maps each byte to its ASCII lowercase: matching is
// case-insensitive for ASCII letters only, so offsets stay the same.
var lowerTab = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if i >= 'A' && i <= 'Z' {
			t[i] = byte(i) + 'a' - 'A'
		}
	}
	return t
}()

func lower(c byte) byte { return lowerTab[c] }

// asciiLower lowercases ASCII letters only, as the scan compares.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lower(c)
	}
	return string(b)
}

// hasPrefixFold reports whether s starts with low (lowercase) ignoring
// ASCII case.
func hasPrefixFold[T ~string | ~[]byte](s T, low string) bool {
	if len(s) < len(low) {
		return false
	}
	for i := 0; i < len(low); i++ {
		if lower(s[i]) != low[i] {
			return false
		}
	}
	return true
}

// Byte classes the scan notes on its way (match's flags).
const (
	hasDigit  = 1 // a digit: code point lists are possible
	hasEscape = 2 // \, % or &: an escape sequence is possible (view.go)
)

// classTab classes each byte.
var classTab = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = hasDigit
	}
	t['\\'], t['%'], t['&'] = hasEscape, hasEscape, hasEscape
	return t
}()

// match finds every form of every credential in s as it is written, in
// one pass: at each position the first two bytes are looked up in one
// set; only where they are someone's is a hash of the first four looked
// up, and then the candidates compared. flags are the byte classes s
// holds.
func match[T ~string | ~[]byte](rd *Redactor, s T, spans []span) (_ []span, flags uint8) {
	var frag [fragmentLen]byte
	for i := nextStart(rd, s, 0); i >= 0; i = nextStart(rd, s, i+1) {
		q := quad(lowerTab[s[i]], lowerTab[s[i+1]], lowerTab[s[i+2]], lowerTab[s[i+3]])
		if rd.needleQuads.has(q) {
			for _, ni := range rd.byStart[uint16(lowerTab[s[i]])<<8|uint16(lowerTab[s[i+1]])] {
				if n := rd.needles[ni]; hasPrefixFold(s[i:], n.text) {
					spans = append(spans, span{from: i, to: i + len(n.text), name: n.name})
				}
			}
		}
		if i+fragmentLen <= len(s) && rd.fragQuads.has(q) {
			for j := range frag {
				frag[j] = lowerTab[s[i+j]]
			}
			if name, ok := rd.fragments[string(frag[:])]; ok {
				spans = append(spans, span{from: i, to: i + fragmentLen, name: name})
			}
		}
	}
	flags = classes(s)
	if flags&hasDigit != 0 {
		spans = codeSpans(rd, s, spans)
	}
	return spans, flags
}

// nextStart is the first position from i where a needle or a fragment
// may start (its first two bytes are one's), -1 when none. The loop is
// kept apart, without calls, so it runs from registers.
func nextStart[T ~string | ~[]byte](rd *Redactor, s T, i int) int {
	for ; i+3 < len(s); i++ {
		if rd.starts.has(uint(s[i])<<8 | uint(s[i+1])) {
			return i
		}
	}
	return -1
}

// classes are the byte classes s holds.
func classes[T ~string | ~[]byte](s T) uint8 {
	var f uint8
	for i := 0; i < len(s); i++ {
		f |= classTab[s[i]]
	}
	return f
}

// match is match on a string.
func (rd *Redactor) match(s string, spans []span) ([]span, uint8) { return match(rd, s, spans) }

// applySpans merges overlapping spans and writes each merged one as the
// mark of its longest member.
func applySpans(s string, spans []span) string {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].from != spans[j].from {
			return spans[i].from < spans[j].from
		}
		return spans[i].to > spans[j].to
	})
	var b []byte
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		best := cur
		for i++; i < len(spans) && spans[i].from < cur.to; i++ {
			if spans[i].to > cur.to {
				cur.to = spans[i].to
			}
			if spans[i].to-spans[i].from > best.to-best.from {
				best = spans[i]
			}
			cur.quoted = cur.quoted || spans[i].quoted
		}
		b = append(b, s[last:cur.from]...)
		if cur.quoted {
			b = append(b, '"')
		}
		b = append(b, mark(best.name)...)
		if cur.quoted {
			b = append(b, '"')
		}
		last = cur.to
	}
	b = append(b, s[last:]...)
	return string(b)
}

// number is one integer in a run of numbers separated by commas and
// white space.
type number struct {
	v        int64
	from, to int
}

// codeSpans adds the credentials written as lists of code points in s.
func codeSpans[T ~string | ~[]byte](rd *Redactor, s T, spans []span) []span {
	if len(rd.codes) == 0 {
		return spans
	}
	var run []number
	flush := func() {
		if len(run) >= MinLen {
			vals := make([]int64, len(run))
			for i, n := range run {
				vals[i] = n.v
			}
			for _, m := range rd.codeMatches(vals) {
				spans = append(spans, span{from: run[m.from].from, to: run[m.to-1].to, name: m.name, quoted: true})
			}
		}
		run = run[:0]
	}
	for i := 0; i < len(s); {
		if len(run) == 0 {
			// Outside a run only a digit matters: skip to the next one.
			for i < len(s) && (s[i] < '0' || s[i] > '9') {
				i++
			}
			if i == len(s) {
				break
			}
		}
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E') || i > 0 && (s[i-1] == '.' || s[i-1] == '-') {
				flush()
				i = j
				continue
			}
			if v, ok := decimal(s[i:j]); ok {
				run = append(run, number{v: v, from: i, to: j})
			} else {
				flush()
			}
			i = j
		case c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		default:
			flush()
			i++
		}
	}
	flush()
	return spans
}

// decimal is the value of a run of digits, if it fits a code point list
// (anything above 1<<31 is no code point).
func decimal[T ~string | ~[]byte](d T) (int64, bool) {
	if len(d) > 10 {
		return 0, false
	}
	var v int64
	for i := 0; i < len(d); i++ {
		v = v*10 + int64(d[i]-'0')
	}
	return v, true
}

// codeMatches finds, in vals, each whole code point sequence of a value
// and each slice of one at least fragmentLen long (for long values).
func (rd *Redactor) codeMatches(vals []int64) []span {
	var out []span
	for _, cs := range rd.codes {
		need := len(cs.codes)
		if need >= minFragmentValue {
			need = fragmentLen
		}
		for i := range vals {
			for o := range cs.codes {
				k := 0
				for i+k < len(vals) && o+k < len(cs.codes) && vals[i+k] == cs.codes[o+k] {
					k++
				}
				if k >= need {
					out = append(out, span{from: i, to: i + k, name: cs.name})
				}
			}
		}
	}
	return out
}

// redactNumbers replaces credentials written as code points inside a
// decoded JSON list: each match becomes one string element, the mark.
func (rd *Redactor) redactNumbers(x []any) []any {
	if len(x) < MinLen || len(rd.codes) == 0 {
		return x
	}
	vals := make([]int64, len(x))
	for i, e := range x {
		n, ok := e.(json.Number)
		if !ok {
			return x
		}
		v, err := n.Int64()
		if err != nil {
			return x
		}
		vals[i] = v
	}
	m := rd.codeMatches(vals)
	if len(m) == 0 {
		return x
	}
	sort.Slice(m, func(i, j int) bool { return m[i].from < m[j].from })
	out := make([]any, 0, len(x))
	last := 0
	for i := 0; i < len(m); {
		cur := m[i]
		for i++; i < len(m) && m[i].from < cur.to; i++ {
			cur.to = max(cur.to, m[i].to)
		}
		out = append(out, x[last:cur.from]...)
		out = append(out, mark(cur.name))
		last = cur.to
	}
	return append(out, x[last:]...)
}
