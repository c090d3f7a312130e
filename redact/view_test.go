package redact

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// escapeEach writes every character of s with esc.
func escapeEach(s string, esc func(r rune) string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(esc(r))
	}
	return b.String()
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestViews: a credential written with escapes of every kind a reader
// decodes is found, and the bytes it was written with are replaced, the
// text around them kept. Each case leaked before views existed.
func TestViews(t *testing.T) {
	t.Parallel()
	const emoji = "tok-\U0001F600-9fQz" // 14 bytes: no fragments, a rune beyond the BMP
	rd := New(map[string]string{"tok": redactSecret, "emo": emoji})
	s := redactSecret
	u := func(r rune) string { return fmt.Sprintf(`\u%04x`, r) }
	cases := []struct{ name, enc, mark string }{
		{"json \\u, every character", escapeEach(s, u), "tok"},
		{"json \\u, upper-case hex", escapeEach(s, func(r rune) string { return fmt.Sprintf(`\u%04X`, r) }), "tok"},
		{"json \\u, some characters", `\u0067hp_Ab\u0043dEf01\u0032345678\u0039X\u0079Z`, "tok"},
		{"surrogate pair", strings.ReplaceAll(strconv.QuoteToASCII(emoji), `\U0001f600`, `\ud83d\ude00`), "emo"},
		{"go \\U", strconv.QuoteToASCII(emoji), "emo"},
		{"\\x", escapeEach(s, func(r rune) string { return fmt.Sprintf(`\x%02x`, r) }), "tok"},
		{"\\u{…}", escapeEach(s, func(r rune) string { return fmt.Sprintf(`\u{%x}`, r) }), "tok"},
		{"octal", escapeEach(s, func(r rune) string { return fmt.Sprintf(`\%03o`, r) }), "tok"},
		{"identity escapes", escapeEach(s, func(r rune) string {
			if strings.ContainsRune("ntrbfvaxuU01234567", r) {
				return string(r) // these mean something else escaped
			}
			return `\` + string(r)
		}), "tok"},
		{"percent, every character", escapeEach(s, func(r rune) string { return fmt.Sprintf("%%%02X", r) }), "tok"},
		{"html decimal", escapeEach(s, func(r rune) string { return fmt.Sprintf("&#%d;", r) }), "tok"},
		{"html hex", escapeEach(s, func(r rune) string { return fmt.Sprintf("&#x%x;", r) }), "tok"},
		{"json inside json", jsonString(escapeEach(s, u)), "tok"},
		{"four levels", jsonString(jsonString(jsonString(escapeEach(s, u)))), "tok"},
		{"json text, value", `{"k":"` + escapeEach(s, u) + `"}`, "tok"},
		{"json text, key", `{"` + escapeEach(s, u) + `":1}`, "tok"},
		{"json text in json text", `{"inner":` + jsonString(`{"k":"`+escapeEach(s, u)+`"}`) + `}`, "tok"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			text := "before " + c.enc + " after"
			got := rd.Redact(text)
			if !strings.Contains(got, "[REDACTED:"+c.mark+"]") || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Errorf("%q\n -> %q", text, got)
			}
			if leak := decodedLeak(got); leak != "" {
				t.Errorf("a reader still reads the credential in %q: %s", got, leak)
			}
		})
	}
	// Escapes that spell nothing are left alone, however many.
	for _, text := range []string{`a\nb\tc \u00e9 %20 &amp; &#233; \x41`, strings.Repeat(`\\`, 1000), `C:\new\table`} {
		if got := rd.Redact(text); got != text {
			t.Errorf("%q changed to %q", text, got)
		}
	}
}

// decodedLeak reads s as a reader would, independently of the views: Go
// string literal rules, JSON, percent and HTML decoding, each repeated.
func decodedLeak(s string) string {
	for i := 0; i < 6; i++ {
		for _, v := range []string{redactSecret, "0123456789", trickySecret, "9fQz"} {
			if strings.Contains(s, v) {
				return v
			}
		}
		next := s
		if u, err := strconv.Unquote(`"` + strings.ReplaceAll(next, `"`, `\"`) + `"`); err == nil {
			next = u
		}
		next = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", "&quot;", `"`).Replace(next)
		if next == s {
			break
		}
		s = next
	}
	return ""
}

// TestViewSource: a match in a view maps back to exactly the bytes it
// was decoded from.
func TestViewSource(t *testing.T) {
	t.Parallel()
	v, ok := unescape(`ab\u0063d%65f&#103;h`)
	if !ok || v.text != "abcdefgh" {
		t.Fatalf("unescape = %q, %v", v.text, ok)
	}
	cases := []struct{ from, to, wantFrom, wantTo int }{
		{0, 2, 0, 2},   // "ab", before any escape
		{2, 3, 2, 8},   // "c" is \u0063
		{1, 4, 1, 9},   // "bcd"
		{4, 5, 9, 12},  // "e" is %65
		{6, 7, 13, 19}, // "g" is &#103;
		{7, 8, 19, 20}, // "h", after the last
		{0, 8, 0, 20},
	}
	for _, c := range cases {
		if f, to := v.source(c.from, c.to); f != c.wantFrom || to != c.wantTo {
			t.Errorf("source(%d, %d) = %d, %d, want %d, %d", c.from, c.to, f, to, c.wantFrom, c.wantTo)
		}
	}
}

// TestNonASCIICase: a credential with a non-ASCII capital is found as
// written (the text is compared ASCII-lowercased; so must the forms be).
func TestNonASCIICase(t *testing.T) {
	t.Parallel()
	rd := New(map[string]string{"u": "Ärger-Passwort-42"})
	if got := rd.Redact("pw: Ärger-Passwort-42."); got != "pw: [REDACTED:u]." {
		t.Errorf("got %q", got)
	}
}
