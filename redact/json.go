package redact

import (
	"strings"

	"github.com/toolgate/toolgate/strictjson"
)

// A JSON encoder escapes a credential's quotes and backslashes (Go's also
// <, > and &, and any encoder may write any character as \uXXXX):
// replacing the credential's text in the bytes misses it, and the reader
// decodes it back. So JSON documents are redacted string by string (keys
// too), each decoded and then read as text — through its views, and as a
// document itself when it holds one (up to maxDepth deep, maxDocSize
// large). The text items of one array — a result's text content blocks, a
// list of strings — are also read joined, one after the other, as a
// reader reads them: a credential split across two blocks is found, and
// each block's part of it replaced, the rest of each block kept.

// JSON redacts a JSON document (a result, an error, a notification, a
// request): changed strings are re-encoded in place, everything else is
// kept byte for byte. ok is false when the document cannot be redacted
// safely — a credential shows outside its strings, or it is not JSON and
// holds a credential — and the caller must then not pass it on.
func (r *Redactor) JSON(b []byte) ([]byte, bool) {
	if r.empty() {
		return b, true
	}
	return r.doc(b, 0)
}

// edit is a string of a document to re-encode with new content.
type edit struct {
	tok  int
	text string
}

// doc redacts document b, found depth documents deep.
func (r *Redactor) doc(b []byte, depth int) ([]byte, bool) {
	d, valid := scanDoc(b)
	if !valid {
		return r.notDoc(b)
	}
	contents := make([]string, len(d.toks))
	var buf []byte
	for i, t := range d.toks {
		if !t.escaped {
			contents[i] = string(b[t.start:t.end])
			continue
		}
		var ok bool
		if buf, ok = strictjson.AppendUnquote(buf[:0], b[t.start:t.end]); !ok {
			return nil, false // a malformed escape: how a reader reads it is anyone's guess
		}
		contents[i] = string(buf)
	}
	extra := map[int][]span{}
	for _, items := range d.joins {
		texts := make([]string, len(items))
		for k, tok := range items {
			texts[k] = contents[tok]
		}
		for k, sp := range r.joinSpans(texts) {
			extra[items[k]] = append(extra[items[k]], sp...)
		}
	}
	var edits []edit
	for i, c := range contents {
		in := c
		if sp := extra[i]; len(sp) > 0 {
			in = applySpans(c, sp)
		}
		if out := r.text(in, depth); out != c {
			edits = append(edits, edit{tok: i, text: out})
		}
	}
	out := b
	if len(edits) > 0 {
		out = make([]byte, 0, len(b)+len(b)/8)
		last := 0
		for _, e := range edits {
			t := d.toks[e.tok]
			out = append(out, b[last:t.start-1]...)
			out = strictjson.AppendString(out, e.text)
			last = t.end + 1
		}
		out = append(out, b[last:]...)
	}
	// What stands outside the strings — numbers, and the quotes between
	// strings for a form that holds one — is searched as written: a
	// credential there cannot be replaced without breaking the document.
	if d.numbers || r.outside {
		if found, _ := match(r, out, nil); len(found) > 0 {
			return nil, false
		}
	}
	return out, true
}

// notDoc judges b, which is not JSON: no reader decodes it as a document,
// but one may read it as text, so it passes only when it holds no
// credential.
func (r *Redactor) notDoc(b []byte) ([]byte, bool) {
	if len(r.spans(string(b))) > 0 {
		return nil, false
	}
	return b, true
}

// looksLikeDoc reports whether s may be a JSON object or array.
func looksLikeDoc(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && (s[0] == '{' || s[0] == '[')
}

// joinSpans reads items one after the other and returns, per item, the
// parts of the credentials that cross from one item into another (those
// inside one item are each item's own to find).
func (r *Redactor) joinSpans(items []string) [][]span {
	offs := make([]int, len(items)+1)
	for i, s := range items {
		offs[i+1] = offs[i] + len(s)
	}
	var per [][]span
	for _, m := range r.spans(strings.Join(items, "")) {
		first := itemAt(offs, m.from)
		last := itemAt(offs, m.to-1)
		if first == last {
			continue
		}
		if per == nil {
			per = make([][]span, len(items))
		}
		for k := first; k <= last; k++ {
			from, to := max(m.from, offs[k])-offs[k], min(m.to, offs[k+1])-offs[k]
			if from < to {
				per[k] = append(per[k], span{from: from, to: to, name: m.name})
			}
		}
	}
	return per
}

// itemAt is the item holding joined byte p.
func itemAt(offs []int, p int) int {
	k := 0
	for k+2 < len(offs) && offs[k+1] <= p {
		k++
	}
	return k
}

// Value redacts a decoded JSON value (decoded with UseNumber) in place
// where it can: every string and key read as Redact reads text, the text
// items of each array joined as in JSON, and credentials written as lists
// of code points (each becomes one mark element).
func (r *Redactor) Value(v any) any {
	if r.empty() {
		return v
	}
	return r.value(v)
}

func (r *Redactor) value(v any) any {
	switch x := v.(type) {
	case string:
		return r.text(x, 0)
	case []any:
		x = r.redactNumbers(x)
		r.joinValues(x)
		for i := range x {
			x[i] = r.value(x[i])
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[r.text(k, 0)] = r.value(val)
		}
		return out
	}
	return v
}

// joinValues replaces in x the parts of credentials that cross from one
// text item (a string element, an element's "text" member) into another.
func (r *Redactor) joinValues(x []any) {
	var at []int
	var texts []string
	for i, e := range x {
		switch y := e.(type) {
		case string:
			at, texts = append(at, i), append(texts, y)
		case map[string]any:
			if t, ok := y["text"].(string); ok {
				at, texts = append(at, i), append(texts, t)
			}
		}
	}
	if len(texts) < 2 {
		return
	}
	for k, sp := range r.joinSpans(texts) {
		if len(sp) == 0 {
			continue
		}
		red := applySpans(texts[k], sp)
		if m, ok := x[at[k]].(map[string]any); ok {
			m["text"] = red
		} else {
			x[at[k]] = red
		}
	}
}
