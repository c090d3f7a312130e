// Package redact owns "credentials never leave": it removes the
// workspace's credential values from everything toolgate passes on — text
// a command printed, the JSON documents a proxied server sends (results,
// errors, notifications, requests), audit records and log lines. Every
// path out of the gateway that can carry a credential calls this package;
// nothing else matches credentials.
//
// A Redactor is compiled once from the credentials (every form looked for
// is derived at load) and is immutable: safe for concurrent use, with no
// locks on the per-call path. What it catches is listed in forms.go; what
// it cannot promise is written down in docs/security.md.
package redact

// MinLen is the shortest credential value that is redacted; shorter
// values ("1", "yes") would shred ordinary output without protecting much.
const MinLen = 4

// Redactor removes credential values, in every form it knows, from text
// and JSON. The zero value and nil redact nothing.
type Redactor struct {
	// creds are the values by name (for the edges of cut output).
	creds map[string]string
	// needles are lowercased forms of the values, longest first.
	needles []needle
	// fragments maps every lowercased fragmentLen-byte slice of a long
	// value (and of its reverse) to the credential's name.
	fragments map[string]string
	// fragStarts has bit (b0<<8|b1) set for the first two bytes of every
	// fragment: a cheap test before the map lookup.
	fragStarts [1 << 16 / 64]uint64
	// codes are the values (and reverses) as code point sequences.
	codes []codeSeq
	// exact are the forms as printed (not lowercased), for callers that
	// align page edges on them.
	exact []string
}

// Redact replaces every credential value in s by [REDACTED:<name>]: as
// written, and in the encodings a program could print it in (forms.go).
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	return r.redact(s)
}

// Forms are the credential forms as printed (not lowercased): callers that
// cut text into pages keep a page edge from falling inside one.
func (r *Redactor) Forms() []string {
	if r == nil {
		return nil
	}
	return r.exact
}

func mark(name string) string { return "[REDACTED:" + name + "]" }
