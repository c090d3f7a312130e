package packs

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// What redaction catches (DESIGN §6; docs/security.md says what it cannot).
// A program the agent writes can transform a credential in its env before
// printing it. The redactor finds, case-insensitively, each credential
// value and its reverse as written; as hex; as base64 (standard and URL
// alphabets, any alignment inside a longer encoded text, with or without
// padding) and base32; JSON-escaped (once or twice), percent-encoded,
// HTML-escaped or shell-quoted; decoded, when the value is itself base64 or
// hex; as a list of code points (jq's explode); and any slice of it at
// least fragmentLen bytes long (of values of minFragmentValue bytes or
// more). Anything else a program can compute — every other cipher,
// interleaving, slices shorter than that — it cannot see.
const (
	// fragmentLen is the shortest slice of a credential that is caught.
	fragmentLen = 12
	// minFragmentValue is the shortest credential whose slices are caught;
	// slices of shorter values would match ordinary words.
	minFragmentValue = 16
	// minVariantLen is the shortest encoded form that is looked for.
	minVariantLen = 6
)

// redactor is built once from the credentials and used for every output.
type redactor struct {
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

type needle struct{ text, name string }

type codeSeq struct {
	name  string
	codes []int64
}

// newRedactor derives every form looked for from creds.
func newRedactor(creds map[string]string) *redactor {
	rd := &redactor{fragments: map[string]string{}}
	seen := map[string]bool{}
	names := make([]string, 0, len(creds))
	for n := range creds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		v := creds[name]
		if len(v) < minRedactLen {
			continue
		}
		add := func(form string, min int) {
			if len(form) < min {
				return
			}
			low := strings.ToLower(form)
			if !seen[name+"\x00"+low] {
				seen[name+"\x00"+low] = true
				rd.needles = append(rd.needles, needle{text: low, name: name})
				rd.exact = append(rd.exact, form)
			}
		}
		forms := append([]string{v, reverseRunes(v)}, decodings(v)...)
		for i, f := range forms {
			add(f, minRedactLen)
			for _, e := range encodings(f) {
				add(e, minVariantLen)
			}
			if i < 2 {
				if len(f) >= minFragmentValue {
					low := strings.ToLower(f)
					for j := 0; j+fragmentLen <= len(low); j++ {
						if _, ok := rd.fragments[low[j:j+fragmentLen]]; !ok {
							rd.fragments[low[j:j+fragmentLen]] = name
							k := uint(low[j])<<8 | uint(low[j+1])
							rd.fragStarts[k/64] |= 1 << (k % 64)
						}
					}
				}
				rd.codes = append(rd.codes, codeSeq{name: name, codes: codepoints(f)})
			}
		}
	}
	sort.SliceStable(rd.needles, func(i, j int) bool { return len(rd.needles[i].text) > len(rd.needles[j].text) })
	return rd
}

// encodings are the encoded forms of s a program prints: hex; base64 and
// base32 of s at every alignment inside a longer text (the characters that
// depend on s alone); escaped for JSON (once, twice), URLs, HTML, shells.
func encodings(s string) []string {
	b := []byte(s)
	out := []string{hex.EncodeToString(b)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, alignedCores(b, 3, 6, enc.EncodeToString)...)
	}
	out = append(out, alignedCores(b, 5, 5, base32.StdEncoding.EncodeToString)...)
	j := jsonEscape(s)
	out = append(out, j, jsonEscape(j), url.QueryEscape(s), url.PathEscape(s), htmlEscape(s),
		strings.ReplaceAll(s, "'", `'\''`))
	return out
}

// alignedCores encodes b behind 0..group-1 filler bytes and keeps the
// characters that depend on b alone: whatever surrounds the value in a
// longer encoded text, those characters appear as they are here.
func alignedCores(b []byte, group, bits int, encode func([]byte) string) []string {
	var out []string
	for a := 0; a < group; a++ {
		in := make([]byte, a+len(b)+group)
		copy(in[a:], b)
		enc := encode(in)
		first := (8*a + bits - 1) / bits
		last := (8*(a+len(b)))/bits - 1
		if last >= first && last < len(enc) {
			out = append(out, enc[first:last+1])
		}
	}
	return out
}

// decodings are what s decodes to, when s is itself base64 or hex text
// (a program could decode the value before printing it).
func decodings(s string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if d, err := enc.DecodeString(s); err == nil && utf8.Valid(d) {
			out = append(out, string(d))
		}
	}
	if d, err := hex.DecodeString(s); err == nil && utf8.Valid(d) {
		out = append(out, string(d))
	}
	return out
}

// jsonEscape is s as jq prints it inside a string (no HTML escapes).
func jsonEscape(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

func htmlEscape(s string) string {
	return strings.NewReplacer("<", "&lt;", ">", "&gt;", "&", "&amp;", "'", "&#39;", `"`, "&quot;").Replace(s)
}

func reverseRunes(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func codepoints(s string) []int64 {
	out := make([]int64, 0, len(s))
	for _, r := range s {
		out = append(out, int64(r))
	}
	return out
}

// span is one match: bytes [from, to) of the text belong to credential name.
type span struct {
	from, to int
	name     string
	// quoted marks are written as a JSON string (a match inside a list of
	// numbers, where a bare mark would break the JSON).
	quoted bool
}

// redact replaces every form of every credential in s by its mark.
func (rd *redactor) redact(s string) string {
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
		mark := "[REDACTED:" + best.name + "]"
		if cur.quoted {
			mark = `"` + mark + `"`
		}
		b.WriteString(mark)
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
func (rd *redactor) codeSpans(s string) []span {
	var spans []span
	var run []number
	flush := func() {
		if len(run) >= minRedactLen {
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
func (rd *redactor) codeMatches(vals []int64) []span {
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
func (rd *redactor) redactNumbers(x []any) []any {
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
		out = append(out, "[REDACTED:"+cur.name+"]")
		last = cur.to
	}
	return append(out, x[last:]...)
}
