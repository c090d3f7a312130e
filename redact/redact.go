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

// The bounds of reading a text as a reader would decode it (view.go,
// json.go). Both bound cost, not what is searched as written: a text
// deeper or larger than them is still matched as written and through
// maxDepth levels of escapes.
const (
	// maxDepth is how many levels of escaping are decoded in a text, and
	// how deep JSON documents held in strings are read as documents.
	maxDepth = 4
	// maxDocSize is the largest string that is read as a JSON document
	// when it looks like one (its text blocks joined, its strings
	// decoded); a larger one is read as text only.
	maxDocSize = 1 << 20
)

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
	// starts holds the first two bytes of every needle and fragment, in
	// every ASCII case: the one test the scan makes at most positions.
	starts bigrams
	// fragQuads and needleQuads hold a hash of their first four bytes
	// (lowercase): the test before any candidate is compared.
	fragQuads, needleQuads bigrams
	// byStart lists the needles (indexes) by their first two bytes.
	byStart map[uint16][]int32
	// outside is set when some form could show outside the strings of a
	// JSON document (json.go).
	outside bool
	// codes are the values (and reverses) as code point sequences.
	codes []codeSeq
	// exact are the forms as printed (not lowercased), for callers that
	// align page edges on them.
	exact []string
}

// Redact replaces every credential value in s by [REDACTED:<name>]: as
// written, in the encodings a program could print it in (forms.go), and
// as a reader would decode s (view.go), a JSON document in s included
// (json.go). Reasons, errors, argv, audit records and log lines all go
// through it.
func (r *Redactor) Redact(s string) string {
	if r.empty() {
		return s
	}
	return r.text(s, 0)
}

// empty reports whether r has nothing to redact: the common path when no
// credential is configured costs one test.
func (r *Redactor) empty() bool { return r == nil || len(r.needles) == 0 && len(r.codes) == 0 }

// text redacts s, a string found depth JSON documents deep: a string
// that is itself a JSON document is redacted as one (its strings decoded,
// its text blocks joined), anything else as text and through its views.
func (r *Redactor) text(s string, depth int) string {
	if s == "" {
		return s
	}
	if depth < maxDepth && len(s) <= maxDocSize && looksLikeDoc(s) {
		if out, ok := r.doc([]byte(s), depth+1); ok {
			if len(out) == len(s) && string(out) == s {
				return s
			}
			return string(out)
		}
	}
	sp := r.spans(s)
	if len(sp) == 0 {
		return s
	}
	return applySpans(s, sp)
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
