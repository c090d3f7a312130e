package strictjson

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// AppendCanonical appends the canonical encoding of v to dst: object keys
// sorted byte-wise at every level, no insignificant whitespace, numbers
// by their literal text, strings escaped as encoding/json escapes them
// (including <, > and &). For the values Parse returns it equals what
// json.Marshal produces for the same document decoded with UseNumber, so
// digests taken over it agree with digests of Go-decoded values.
//
// v may hold what Parse returns plus float64, int and int64 (values built
// in Go); a float64 that is NaN or infinite, or any other type, encodes as
// null and reports false.
func AppendCanonical(dst []byte, v any) ([]byte, bool) {
	ok := true
	dst = appendValue(dst, v, &ok, true)
	return dst, ok
}

// AppendCompact appends v like AppendCanonical, except that <, > and &
// stay as they are, as an encoding/json Encoder with SetEscapeHTML(false)
// writes them: the form of what toolgate answers MCP clients with, where
// the text a tool printed arrives as printed. It is not for digests.
func AppendCompact(dst []byte, v any) ([]byte, bool) {
	ok := true
	dst = appendValue(dst, v, &ok, false)
	return dst, ok
}

// Canonical returns the canonical encoding of v (see AppendCanonical).
func Canonical(v any) ([]byte, bool) { return AppendCanonical(nil, v) }

func appendValue(dst []byte, v any, ok *bool, html bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case json.Number:
		if x == "" {
			return append(dst, '0')
		}
		return append(dst, x...)
	case string:
		return appendString(dst, x, html)
	case float64:
		return appendFloat(dst, x, ok)
	case int:
		return strconv.AppendInt(dst, int64(x), 10)
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendValue(dst, e, ok, html)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		var small [16]string
		keys := small[:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, k, html)
			dst = append(dst, ':')
			dst = appendValue(dst, x[k], ok, html)
		}
		return append(dst, '}')
	}
	*ok = false
	return append(dst, "null"...)
}

// appendFloat formats f the way encoding/json does.
func appendFloat(dst []byte, f float64, ok *bool) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		*ok = false
		return append(dst, "null"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string, escaped exactly as
// encoding/json escapes it by default (<, > and & as \u escapes). s must be
// valid UTF-8 (Parse guarantees it); invalid bytes become U+FFFD, as
// encoding/json does.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, true) }

// AppendStringNoHTML is AppendString as an encoding/json Encoder with
// SetEscapeHTML(false) writes it: <, > and & as they are. The audit log
// writes its lines this way.
func AppendStringNoHTML(dst []byte, s string) []byte { return appendString(dst, s, false) }

func appendString(dst []byte, s string, html bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!html || b != '<' && b != '>' && b != '&') {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
