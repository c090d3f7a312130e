package redact

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// span is one match: bytes [from, to) of the text belong to credential name.
type span struct {
	from, to int
	name     string
	// quoted marks are written as a JSON string (a match inside a list of
	// numbers, where a bare mark would break the JSON).
	quoted bool
}

// redact replaces every form of every credential in s by its mark.
func (rd *Redactor) redact(s string) string {
	if len(rd.needles) == 0 || s == "" {
		return s
	}
	low := asciiLower(s)
	var spans []span
	for _, n := range rd.needles {
		for i := 0; ; {
			j := strings.Index(low[i:], n.text)
			if j < 0 {
				break
			}
			spans = append(spans, span{from: i + j, to: i + j + len(n.text), name: n.name})
			i += j + 1
		}
	}
	if len(rd.fragments) > 0 {
		for i := 0; i+fragmentLen <= len(low); i++ {
			if k := uint(low[i])<<8 | uint(low[i+1]); rd.fragStarts[k/64]&(1<<(k%64)) == 0 {
				continue
			}
			if name, ok := rd.fragments[low[i:i+fragmentLen]]; ok {
				spans = append(spans, span{from: i, to: i + fragmentLen, name: name})
			}
		}
	}
	spans = append(spans, rd.codeSpans(s)...)
	if len(spans) == 0 {
		return s
	}
	return applySpans(s, spans)
}

// asciiLower lowercases ASCII letters only, so byte offsets stay the same.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// applySpans merges overlapping spans and writes each merged one as the
// mark of its longest member.
func applySpans(s string, spans []span) string {
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].from != spans[j].from {
			return spans[i].from < spans[j].from
		}
		return spans[i].to > spans[j].to
	})
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		best := cur
		for i++; i < len(spans) && spans[i].from < cur.to; i++ {
			if spans[i].to > cur.to {
				cur.to = spans[i].to
			}
			if spans[i].to-spans[i].from > best.to-best.from {
				best = spans[i]
			}
			cur.quoted = cur.quoted || spans[i].quoted
		}
		b.WriteString(s[last:cur.from])
		m := mark(best.name)
		if cur.quoted {
			m = `"` + m + `"`
		}
		b.WriteString(m)
		last = cur.to
	}
	b.WriteString(s[last:])
	return b.String()
}

// number is one integer in a run of numbers separated by commas and
// white space.
type number struct {
	v        int64
	from, to int
}

// codeSpans finds credentials written as lists of code points.
func (rd *Redactor) codeSpans(s string) []span {
	var spans []span
	var run []number
	flush := func() {
		if len(run) >= MinLen {
			vals := make([]int64, len(run))
			for i, n := range run {
				vals[i] = n.v
			}
			for _, m := range rd.codeMatches(vals) {
				spans = append(spans, span{from: run[m.from].from, to: run[m.to-1].to, name: m.name, quoted: true})
			}
		}
		run = run[:0]
	}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			j := i
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j < len(s) && (s[j] == '.' || s[j] == 'e' || s[j] == 'E') || i > 0 && (s[i-1] == '.' || s[i-1] == '-') {
				flush()
				i = j
				continue
			}
			v, err := strconv.ParseInt(s[i:j], 10, 64)
			if err != nil {
				flush()
			} else {
				run = append(run, number{v: v, from: i, to: j})
			}
			i = j
		case c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r':
			i++
		default:
			flush()
			i++
		}
	}
	flush()
	return spans
}

// codeMatches finds, in vals, each whole code point sequence of a value
// and each slice of one at least fragmentLen long (for long values).
func (rd *Redactor) codeMatches(vals []int64) []span {
	var out []span
	for _, cs := range rd.codes {
		need := len(cs.codes)
		if need >= minFragmentValue {
			need = fragmentLen
		}
		for i := range vals {
			for o := range cs.codes {
				k := 0
				for i+k < len(vals) && o+k < len(cs.codes) && vals[i+k] == cs.codes[o+k] {
					k++
				}
				if k >= need {
					out = append(out, span{from: i, to: i + k, name: cs.name})
				}
			}
		}
	}
	return out
}

// redactNumbers replaces credentials written as code points inside a
// decoded JSON list: each match becomes one string element, the mark.
func (rd *Redactor) redactNumbers(x []any) []any {
	vals := make([]int64, len(x))
	for i, e := range x {
		n, ok := e.(json.Number)
		if !ok {
			return x
		}
		v, err := n.Int64()
		if err != nil {
			return x
		}
		vals[i] = v
	}
	m := rd.codeMatches(vals)
	if len(m) == 0 {
		return x
	}
	sort.Slice(m, func(i, j int) bool { return m[i].from < m[j].from })
	out := make([]any, 0, len(x))
	last := 0
	for i := 0; i < len(m); {
		cur := m[i]
		for i++; i < len(m) && m[i].from < cur.to; i++ {
			cur.to = max(cur.to, m[i].to)
		}
		out = append(out, x[last:cur.from]...)
		out = append(out, mark(cur.name))
		last = cur.to
	}
	return append(out, x[last:]...)
}
