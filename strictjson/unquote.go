package strictjson

import (
	"bytes"
	"slices"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnquote appends the value of the JSON string body lit (what
// stands between its quotes) to dst, leniently: an unpaired surrogate
// escape becomes U+FFFD, as encoding/json decodes it. ok is false for a
// malformed escape; bytes that are not UTF-8 are copied as they are
// (a credential is text, so no match depends on them). It serves readers that must see what any decoder
// would read (redaction), not the strict parse.
func AppendUnquote(dst, lit []byte) ([]byte, bool) {
	dst = slices.Grow(dst, len(lit))
	for i := 0; i < len(lit); i++ {
		if k := bytes.IndexByte(lit[i:], '\\'); k != 0 {
			if k < 0 {
				return append(dst, lit[i:]...), true
			}
			dst = append(dst, lit[i:i+k]...)
			i += k
		}
		if i+1 >= len(lit) {
			return dst, false
		}
		i++
		switch lit[i] {
		case '"', '\\', '/':
			dst = append(dst, lit[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(lit[i+1:])
			if !ok {
				return dst, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 < len(lit) && lit[i+1] == '\\' && lit[i+2] == 'u' {
					if r2, ok := hex4(lit[i+3:]); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
							i += 6
						}
					}
				}
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, false
		}
	}
	return dst, true
}
