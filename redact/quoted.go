package redact

import (
	"strconv"
	"strings"
)

// A credential is rarely written as itself where it leaks: a refusal
// reason quotes an argument Go-style, escaping its quotes and backslashes.
// Replacing the credential's text in such bytes misses it, and the reader
// decodes it back. So reasons and errors are redacted with the Go-quoted
// strings in them unquoted.

// maxQuotedScan bounds the text searched for quoted credentials (each
// quote is tried as an opening one).
const maxQuotedScan = 64 << 10

// Quoted is Redact, and also redacts each Go-quoted string in s whose
// value holds a credential (re-quoted): for reasons and errors, which
// quote the arguments they name.
func (r *Redactor) Quoted(s string) string {
	if r == nil {
		return s
	}
	s = r.redact(s)
	if !strings.Contains(s, `"`) || len(s) > maxQuotedScan {
		return s
	}
	// Every quote may open a quoted string (a stray one must not hide the
	// next): redact each quoted string whose value holds a credential,
	// the earliest first, never overlapping.
	var b strings.Builder
	done := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		q, err := strconv.QuotedPrefix(s[i:])
		if err != nil {
			continue
		}
		u, err := strconv.Unquote(q)
		if err != nil {
			continue
		}
		if red := r.redact(u); red != u {
			b.WriteString(s[done:i])
			b.WriteString(strconv.Quote(red))
			done = i + len(q)
			i = done - 1
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}
