package redact

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A reader decodes what it is shown: a model reading `\u0073\u006b…`,
// `%73%6b…` or `&#115;&#107;…` reads the credential, and a string that
// holds a JSON document holds its strings escaped once more. So besides a
// text as written, redaction matches the text as a reader decodes it: a
// view of the text with every escape sequence decoded (the list below),
// and the view of that view, up to maxDepth levels. A match in a view is
// mapped back to the bytes it was decoded from, and those are replaced.
//
// The sequences decoded are those of JSON (\uXXXX with surrogate pairs,
// \n \t \r \b \f \/ \" \\), of Go, C, Python and JavaScript string
// literals (\xHH, \UXXXXXXXX, \u{X…}, octal \NNN, \a \v \', and any
// other character escaped reads as itself), percent
// encoding (%HH) and HTML character references (&#DDD; &#xHH; &lt; &gt;
// &amp; &quot; &apos;). Each level is one linear pass, so a text costs at
// most maxDepth+1 scans however it is escaped.

// seg is one escape sequence a view decoded: source bytes [src,
// src+srcLen) became view bytes [at, at+n).
type seg struct{ at, n, src, srcLen int32 }

// view is a text with one level of escapes decoded, and the way back.
type view struct {
	text string
	segs []seg
}

// unescape decodes one level of escape sequences in s; ok is false when
// s holds none.
func unescape(s string) (view, bool) {
	var b []byte
	var segs []seg
	last := 0
	for i := 0; i < len(s); {
		k := strings.IndexAny(s[i:], `\%&`)
		if k < 0 {
			break
		}
		i += k
		v, raw, n := sequence(s, i)
		if n == 0 {
			i++
			continue
		}
		if b == nil {
			b = make([]byte, 0, len(s))
		}
		b = append(b, s[last:i]...)
		at := len(b)
		if raw {
			b = append(b, byte(v))
		} else {
			b = utf8.AppendRune(b, v)
		}
		segs = append(segs, seg{at: int32(at), n: int32(len(b) - at), src: int32(i), srcLen: int32(n)})
		i += n
		last = i
	}
	if segs == nil {
		return view{}, false
	}
	return view{text: string(append(b, s[last:]...)), segs: segs}, true
}

// source maps view bytes [from, to) to the source bytes they came from.
func (v *view) source(from, to int) (int, int) {
	return v.pos(from, false), v.pos(to-1, true)
}

// pos maps view byte p to its source: the first byte of the sequence it
// was decoded from, or the byte after it when end.
func (v *view) pos(p int, end bool) int {
	e := 0
	if end {
		e = 1
	}
	k := sort.Search(len(v.segs), func(i int) bool { return int(v.segs[i].at) > p }) - 1
	if k < 0 {
		return p + e
	}
	s := v.segs[k]
	at, n, src, srcLen := int(s.at), int(s.n), int(s.src), int(s.srcLen)
	if p < at+n {
		if end {
			return src + srcLen
		}
		return src
	}
	return src + srcLen + p - (at + n) + e
}

// sequence decodes the escape sequence at s[i], if one starts there: its
// value (a byte when raw, else a rune) and its length (0 for none).
func sequence(s string, i int) (v rune, raw bool, n int) {
	rest := s[i:]
	switch rest[0] {
	case '%':
		if h, ok := hexVal(rest[1:], 2); ok {
			return h, true, 3
		}
	case '&':
		return entity(rest)
	case '\\':
		if len(rest) < 2 {
			return 0, false, 0
		}
		switch c := rest[1]; c {
		case 'n':
			return '\n', false, 2
		case 't':
			return '\t', false, 2
		case 'r':
			return '\r', false, 2
		case 'b':
			return '\b', false, 2
		case 'f':
			return '\f', false, 2
		case 'v':
			return '\v', false, 2
		case 'a':
			return '\a', false, 2
		case '"', '\'', '\\', '/':
			return rune(c), false, 2
		case 'x':
			if h, ok := hexVal(rest[2:], 2); ok {
				return h, true, 4
			}
		case 'U':
			if h, ok := hexVal(rest[2:], 8); ok {
				return validRune(h), false, 10
			}
		case 'u':
			return uEscape(rest)
		default:
			if c >= '0' && c <= '7' {
				o, k := rune(0), 1
				for ; k <= 3 && k < len(rest) && rest[k] >= '0' && rest[k] <= '7'; k++ {
					o = o*8 + rune(rest[k]-'0')
				}
				if o <= 0xff {
					return o, true, k
				}
			}
			if c > ' ' && c < utf8.RuneSelf {
				// Any other escaped character reads as itself (JavaScript,
				// and most lenient readers).
				return rune(c), false, 2
			}
		}
	}
	return 0, false, 0
}

// uEscape decodes \uXXXX (a surrogate pair as one rune, a lone surrogate
// as U+FFFD, as JSON decoders do) and \u{X…}.
func uEscape(rest string) (rune, bool, int) {
	if len(rest) > 2 && rest[2] == '{' {
		if end := strings.IndexByte(rest, '}'); end > 3 && end <= 9 {
			if h, ok := hexVal(rest[3:end], end-3); ok {
				return validRune(h), false, end + 1
			}
		}
		return 0, false, 0
	}
	h, ok := hexVal(rest[2:], 4)
	if !ok {
		return 0, false, 0
	}
	if !utf16.IsSurrogate(h) {
		return h, false, 6
	}
	if len(rest) >= 12 && rest[6] == '\\' && rest[7] == 'u' {
		if lo, ok := hexVal(rest[8:], 4); ok {
			if d := utf16.DecodeRune(h, lo); d != utf8.RuneError {
				return d, false, 12
			}
		}
	}
	return utf8.RuneError, false, 6
}

// entity decodes an HTML character reference at the start of rest.
func entity(rest string) (rune, bool, int) {
	end := strings.IndexByte(rest, ';')
	if end < 3 || end > 10 {
		return 0, false, 0
	}
	body := rest[1:end]
	switch body {
	case "lt":
		return '<', false, end + 1
	case "gt":
		return '>', false, end + 1
	case "amp":
		return '&', false, end + 1
	case "quot":
		return '"', false, end + 1
	case "apos":
		return '\'', false, end + 1
	}
	if body[0] != '#' {
		return 0, false, 0
	}
	var v rune
	if body[1] == 'x' || body[1] == 'X' {
		h, ok := hexVal(body[2:], len(body)-2)
		if !ok || len(body) < 3 {
			return 0, false, 0
		}
		v = h
	} else {
		for _, c := range body[1:] {
			if c < '0' || c > '9' {
				return 0, false, 0
			}
			v = v*10 + c - '0'
		}
	}
	return validRune(v), false, end + 1
}

// hexVal reads exactly n hex digits at the start of s.
func hexVal(s string, n int) (rune, bool) {
	if len(s) < n || n == 0 {
		return 0, false
	}
	var v rune
	for i := 0; i < n; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func validRune(r rune) rune {
	if !utf8.ValidRune(r) {
		return utf8.RuneError
	}
	return r
}

// spans are the matches in s as written and in each view of it.
func (rd *Redactor) spans(s string) []span {
	out, flags := rd.match(s, nil)
	var levels []view
	for cur := s; len(levels) < maxDepth && flags&hasEscape != 0; {
		v, ok := unescape(cur)
		if !ok {
			break
		}
		levels = append(levels, v)
		var found []span
		found, flags = rd.match(v.text, nil)
		for _, m := range found {
			for l := len(levels) - 1; l >= 0; l-- {
				m.from, m.to = levels[l].source(m.from, m.to)
			}
			out = append(out, m)
		}
		cur = v.text
	}
	return out
}
