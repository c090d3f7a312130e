package redact

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// What redaction catches (docs/security.md says what it cannot).
// A program the agent writes can transform a credential in its env before
// printing it. The redactor finds, case-insensitively, each credential
// value and its reverse as written; as hex; as base64 (standard and URL
// alphabets, any alignment inside a longer encoded text, with or without
// padding) and base32; JSON-escaped (once or twice), percent-encoded,
// HTML-escaped or shell-quoted; decoded, when the value is itself base64 or
// hex; as a list of code points (jq's explode); and any slice of it at
// least fragmentLen bytes long (of values of minFragmentValue bytes or
// more). Each text is also matched as a reader decodes it (view.go), and
// a JSON document string by string, its text blocks joined (json.go).
// Anything else a program can compute — every other cipher, interleaving,
// slices shorter than that — it cannot see.
const (
	// fragmentLen is the shortest slice of a credential that is caught.
	fragmentLen = 12
	// minFragmentValue is the shortest credential whose slices are caught;
	// slices of shorter values would match ordinary words.
	minFragmentValue = 16
	// minVariantLen is the shortest encoded form that is looked for.
	minVariantLen = 6
)

type needle struct{ text, name string }

type codeSeq struct {
	name  string
	codes []int64
}

// New compiles a Redactor for creds (values by name): every form looked
// for is derived here, once. Values shorter than MinLen are not redacted.
func New(creds map[string]string) *Redactor {
	rd := &Redactor{creds: map[string]string{}, fragments: map[string]string{}}
	seen := map[string]bool{}
	names := make([]string, 0, len(creds))
	for n := range creds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		v := creds[name]
		if len(v) < MinLen {
			continue
		}
		rd.creds[name] = v
		add := func(form string, min int) {
			if len(form) < min {
				return
			}
			low := asciiLower(form)
			if !seen[name+"\x00"+low] {
				seen[name+"\x00"+low] = true
				rd.needles = append(rd.needles, needle{text: low, name: name})
				rd.exact = append(rd.exact, form)
			}
		}
		forms := append([]string{v, reverseRunes(v)}, decodings(v)...)
		for i, f := range forms {
			add(f, MinLen)
			for _, e := range encodings(f) {
				add(e, minVariantLen)
			}
			if i < 2 {
				if len(f) >= minFragmentValue {
					low := asciiLower(f)
					for j := 0; j+fragmentLen <= len(low); j++ {
						if _, ok := rd.fragments[low[j:j+fragmentLen]]; !ok {
							rd.fragments[low[j:j+fragmentLen]] = name
							rd.fragQuads.add(quad(low[j], low[j+1], low[j+2], low[j+3]))
							rd.starts.setFold(low[j], low[j+1])
						}
					}
				}
				rd.codes = append(rd.codes, codeSeq{name: name, codes: codepoints(f)})
			}
		}
	}
	sort.SliceStable(rd.needles, func(i, j int) bool { return len(rd.needles[i].text) > len(rd.needles[j].text) })
	rd.index()
	return rd
}

// index builds what the one-pass scan looks up: the needles by their
// first two bytes, and whether any form could show in a JSON document
// outside its strings (json.go).
func (rd *Redactor) index() {
	rd.byStart = map[uint16][]int32{}
	for i, n := range rd.needles {
		rd.needleQuads.add(quad(n.text[0], n.text[1], n.text[2], n.text[3]))
		rd.starts.setFold(n.text[0], n.text[1])
		k := uint16(n.text[0])<<8 | uint16(n.text[1])
		rd.byStart[k] = append(rd.byStart[k], int32(i))
		rd.outside = rd.outside || outsideForm(n.text)
	}
	for f := range rd.fragments {
		rd.outside = rd.outside || outsideForm(f)
	}
}

// outsideForm reports whether form could show outside the strings of a
// JSON document that holds no number (one that does is searched whole):
// it holds a quote (it can close one string and open the next), or it is
// made only of literals and punctuation.
func outsideForm(form string) bool {
	if strings.IndexByte(form, '"') >= 0 {
		return true
	}
	return strings.Trim(form, "{}[],: \t\r\ntruefalsn") == ""
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
