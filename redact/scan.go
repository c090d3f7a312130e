package redact

import (
	"bytes"

	"github.com/toolgate/toolgate/strictjson"
)

// strTok is one string of a JSON document: b[start:end] is what stands
// between its quotes.
type strTok struct {
	start, end int
	escaped    bool
}

// docScan is what redaction needs of a document: its strings (keys too)
// in order, and the text items of each array that holds two or more.
type docScan struct {
	toks []strTok
	// joins lists, per array with two or more text items, the strings a
	// reader reads one after the other: its string elements and the
	// "text" member of its object elements (text content blocks).
	joins [][]int
	// numbers is set when a number stands outside the strings.
	numbers bool
}

// maxNesting bounds how deep a document's arrays and objects are read
// (encoding/json's own bound): a deeper one is judged as text.
const maxNesting = 10000

// frame is an array or object the scan is inside. It holds no pointer,
// so a deep document costs a flat stack.
type frame struct {
	arr bool
	// items is where the text items of an array (token indexes) start
	// on the scan's item stack.
	items int
	// text is the token of an object's "text" member, -1 when it has none
	// (or its value is not a string); keyIsText: the member being read.
	text      int
	keyIsText bool
}

// scanDoc reads the JSON document b; ok is false when b is not one. It
// accepts what strict decoders refuse only where that cannot hide a
// credential (control characters in strings, loose number syntax): the
// strings it reports are read as any decoder reads them.
func scanDoc(b []byte) (*docScan, bool) {
	d := &docScan{}
	var st []frame
	var items []int
	const (
		needValue = iota
		needValueOrEnd
		needKey
		needKeyOrEnd
		afterValue
	)
	state := needValue
	i := 0
	for {
		i = skipSpace(b, i)
		switch state {
		case needValueOrEnd, needKeyOrEnd:
			if i < len(b) && (b[i] == ']' && state == needValueOrEnd || b[i] == '}' && state == needKeyOrEnd) {
				i++
				st, items = d.close(st, items)
				state = afterValue
			} else if state == needValueOrEnd {
				state = needValue
			} else {
				state = needKey
			}
		case needKey:
			if i >= len(b) || b[i] != '"' {
				return nil, false
			}
			t, next, ok := scanString(b, i)
			if !ok {
				return nil, false
			}
			d.toks = append(d.toks, t)
			st[len(st)-1].keyIsText = isTextKey(b, t)
			i = skipSpace(b, next)
			if i >= len(b) || b[i] != ':' {
				return nil, false
			}
			i++
			state = needValue
		case needValue:
			if i >= len(b) {
				return nil, false
			}
			tok := -1
			switch c := b[i]; {
			case len(st) >= maxNesting:
				return nil, false
			case c == '{':
				st = append(st, frame{text: -1})
				i++
				state = needKeyOrEnd
			case c == '[':
				st = append(st, frame{arr: true, items: len(items), text: -1})
				i++
				state = needValueOrEnd
			case c == '"':
				t, next, ok := scanString(b, i)
				if !ok {
					return nil, false
				}
				tok = len(d.toks)
				d.toks = append(d.toks, t)
				i = next
				state = afterValue
			case c == '-' || c >= '0' && c <= '9':
				j := i + 1
				for j < len(b) && bytes.IndexByte([]byte("0123456789+-.eE"), b[j]) >= 0 {
					j++
				}
				d.numbers = true
				i = j
				state = afterValue
			default:
				n := literal(b[i:])
				if n == 0 {
					return nil, false
				}
				i += n
				state = afterValue
			}
			// The value belongs to the enclosing frame: an element of an
			// array, or the member just keyed of an object.
			if k := len(st) - 1 - boolInt(state != afterValue); k >= 0 {
				if f := &st[k]; f.arr && tok >= 0 {
					items = append(items, tok)
				} else if !f.arr && f.keyIsText {
					f.text, f.keyIsText = tok, false
				}
			}
		case afterValue:
			if len(st) == 0 {
				return d, i == len(b)
			}
			if i >= len(b) {
				return nil, false
			}
			top := &st[len(st)-1]
			switch c := b[i]; {
			case c == ',':
				i++
				if top.arr {
					state = needValue
				} else {
					state = needKey
				}
			case c == ']' && top.arr, c == '}' && !top.arr:
				i++
				st, items = d.close(st, items)
			default:
				return nil, false
			}
		}
	}
}

// close ends the innermost frame: an array's text items become a join;
// an object's text member becomes an item of the array holding it.
func (d *docScan) close(st []frame, items []int) ([]frame, []int) {
	f := st[len(st)-1]
	st = st[:len(st)-1]
	if f.arr {
		if len(items)-f.items >= 2 {
			d.joins = append(d.joins, append([]int(nil), items[f.items:]...))
		}
		items = items[:f.items]
	}
	if !f.arr && f.text >= 0 && len(st) > 0 && st[len(st)-1].arr {
		items = append(items, f.text)
	}
	return st, items
}

// scanString reads the string whose opening quote is b[i]: its token and
// the offset after its closing quote. Escapes are checked when decoded.
func scanString(b []byte, i int) (strTok, int, bool) {
	t := strTok{start: i + 1}
	j, q := i+1, -1
	for {
		if q < j {
			k := bytes.IndexByte(b[j:], '"')
			if k < 0 {
				return t, 0, false
			}
			q = j + k
		}
		bs := bytes.IndexByte(b[j:q], '\\')
		if bs < 0 {
			t.end = q
			return t, q + 1, true
		}
		t.escaped = true
		j += bs + 2
		if j > len(b) {
			return t, 0, false
		}
	}
}

// isTextKey reports whether key token t reads "text".
func isTextKey(b []byte, t strTok) bool {
	if !t.escaped {
		return string(b[t.start:t.end]) == "text"
	}
	var buf [16]byte
	k, ok := strictjson.AppendUnquote(buf[:0], b[t.start:t.end])
	return ok && string(k) == "text"
}

func literal(b []byte) int {
	for _, w := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(b, []byte(w)) {
			return len(w)
		}
	}
	return 0
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
