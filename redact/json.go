package redact

import (
	"bytes"
	"encoding/json"

	"github.com/toolgate/toolgate/strictjson"
)

// A JSON encoder escapes a credential's quotes and backslashes (Go's also
// <, > and &, and any encoder may write any character as \uXXXX):
// replacing the credential's text in the bytes misses it, and the reader
// decodes it back. So JSON documents are redacted string by string,
// decoded, keys too.

// JSON redacts a JSON document: every string (keys too) decoded,
// redacted, and the document re-encoded (canonically) when anything
// changed. ok is false when the document cannot be redacted safely: it
// does not decode, or a credential shows outside any string; the caller
// must then not pass it on.
func (r *Redactor) JSON(b []byte) ([]byte, bool) {
	if r == nil {
		return b, true
	}
	raw := r.redact(string(b))
	if raw == string(b) && !r.escapedCredential(b) {
		return b, true // no credential written as itself, none escaped
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	changed := false
	v = r.docValue(v, &changed)
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
func (r *Redactor) escapedCredential(b []byte) bool {
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
			if s := string(buf); r.redact(s) != s {
				return true
			}
		}
		i = j
	}
	return false
}

// docValue redacts the strings and keys of a decoded document.
func (r *Redactor) docValue(v any, changed *bool) any {
	switch x := v.(type) {
	case string:
		if red := r.redact(x); red != x {
			*changed = true
			return red
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = r.docValue(e, changed)
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			rk := r.redact(k)
			if rk != k {
				*changed = true
			}
			out[rk] = r.docValue(e, changed)
		}
		return out
	}
	return v
}

// Value redacts a decoded JSON value (decoded with UseNumber) in place
// where it can: every string and key, and credentials written as lists of
// code points (each becomes one mark element), since escapes in the JSON
// text could hide a credential from a textual match.
func (r *Redactor) Value(v any) any {
	if r == nil {
		return v
	}
	switch x := v.(type) {
	case string:
		return r.redact(x)
	case []any:
		x = r.redactNumbers(x)
		for i := range x {
			x[i] = r.Value(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[r.redact(k)] = r.Value(val)
		}
		return out
	}
	return v
}
