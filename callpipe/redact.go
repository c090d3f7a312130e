package callpipe

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/toolgate/toolgate/strictjson"
)

// A credential is rarely written as itself where it leaks: a JSON encoder
// escapes its quotes and backslashes (Go's also <, > and &, and any
// encoder may write any character as \uXXXX), and a refusal reason quotes
// an argument Go-style. Replacing the credential's text in such bytes
// misses it, and the reader — the agent, the audit's reader — decodes it
// back. So the pipeline redacts what a text means, not how it is written:
// Go-quoted strings in reasons and errors are redacted unquoted, and JSON
// documents are redacted string by string, decoded.

// textRedactor redacts plain text and the Go-quoted strings in it.
type textRedactor struct{ inner Redactor }

func (r textRedactor) Redact(s string) string {
	s = r.inner.Redact(s)
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
		if red := r.inner.Redact(u); red != u {
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

// maxQuotedScan bounds the text searched for quoted credentials (each
// quote is tried as an opening one).
const maxQuotedScan = 64 << 10

// redactDoc redacts a JSON document: every string (keys too) decoded,
// redacted, and the document re-encoded (canonically) when anything
// changed. ok is false when the document cannot be redacted safely: it
// does not decode, or a credential shows outside any string.
func redactDoc(red Redactor, b []byte) ([]byte, bool) {
	if t, ok := red.(textRedactor); ok {
		red = t.inner // strings are redacted decoded: no quoted forms to look for
	}
	raw := red.Redact(string(b))
	if raw == string(b) && !escapedCredential(red, b) {
		return b, true // no credential written as itself, none escaped
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	changed := false
	v = redactValue(red, v, &changed)
	if !changed {
		if raw != string(b) {
			return nil, false // a credential outside the strings
		}
		return b, true
	}
	out, ok := strictjson.Canonical(v)
	return out, ok
}

// escapedCredential reports whether a string of the JSON document b that
// is written with escapes holds a credential once unescaped (strings
// without escapes were searched as bytes already). It does not build the
// document, so a clean result costs one pass; anything it cannot read is
// reported, for the decoder to judge.
func escapedCredential(red Redactor, b []byte) bool {
	var buf []byte
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		j, escaped := i+1, false
		for j < len(b) && b[j] != '"' {
			if b[j] == '\\' {
				escaped = true
				j++
			}
			j++
		}
		if j >= len(b) {
			return true
		}
		if escaped {
			var ok bool
			if buf, ok = strictjson.AppendUnquote(buf[:0], b[i+1:j]); !ok {
				return true
			}
			if s := string(buf); red.Redact(s) != s {
				return true
			}
		}
		i = j
	}
	return false
}

func redactValue(red Redactor, v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if r := red.Redact(x); r != x {
			*changed = true
			return r
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = redactValue(red, e, changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			rk := red.Redact(k)
			if rk != k {
				*changed = true
			}
			out[rk] = redactValue(red, e, changed)
		}
		return out
	}
	return v
}
