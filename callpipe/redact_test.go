package callpipe

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// replacer redacts fixed values, as the gateway's runner does.
type replacer struct{ secrets []string }

func (r replacer) Redact(s string) string {
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "[REDACTED:x]")
	}
	return s
}

const trickySecret = `sk-<a>&"b\c/d`

func TestTextRedactorQuoted(t *testing.T) {
	t.Parallel()
	r := textRedactor{replacer{[]string{trickySecret, "plainsecret"}}}
	cases := []struct{ in, want string }{
		{"no quotes plainsecret", "no quotes [REDACTED:x]"},
		{`parameter "how": ` + strconv.Quote(trickySecret) + ` does not match`, `parameter "how": "[REDACTED:x]" does not match`},
		{`a ` + strconv.Quote("x "+trickySecret+" y") + ` and ` + strconv.Quote(trickySecret), `a "x [REDACTED:x] y" and "[REDACTED:x]"`},
		{`stray " quote then ` + strconv.Quote(trickySecret), `stray " quote then "[REDACTED:x]"`},
		{`unterminated "` + trickySecret, `unterminated "[REDACTED:x]`},
		{`"ok" "plain"`, `"ok" "plain"`},
	}
	for _, c := range cases {
		if got := r.Redact(c.in); got != c.want {
			t.Errorf("Redact(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestRedactDoc(t *testing.T) {
	t.Parallel()
	red := textRedactor{replacer{[]string{trickySecret, "plainsecret"}}}
	goEnc, _ := json.Marshal(map[string]any{"text": "token " + trickySecret})
	var allEscaped strings.Builder
	for _, r := range "token " + trickySecret {
		allEscaped.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
	}
	cases := []struct {
		name, in string
		ok       bool
		want     string // substring of the result; "" to require it unchanged
	}{
		{"clean", `{"content":[{"type":"text","text":"hello\nworld"}]}`, true, ""},
		{"raw", `{"text":"token plainsecret"}`, true, `"token [REDACTED:x]"`},
		{"go-encoded", string(goEnc), true, `"token [REDACTED:x]"`},
		{"every char escaped", `{"text":"` + allEscaped.String() + `"}`, true, `"token [REDACTED:x]"`},
		{"in a key", `{"plainsecret":1}`, true, `"[REDACTED:x]":1`},
		{"nested", `{"a":[{"b":"x plainsecret"}],"n":12345678901234567890}`, true, `12345678901234567890`},
		{"outside strings", `{"n":1,"plainsecret`, false, ""},
		{"in a number", `{"n":123}`, true, ""},
		{"not JSON with an escape", `{"a":"\q"}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := redactDoc(red, []byte(c.in))
			if ok != c.ok {
				t.Fatalf("redactDoc(%s) ok = %v, want %v (%s)", c.in, ok, c.ok, got)
			}
			if !ok {
				return
			}
			if c.want == "" && string(got) != c.in {
				t.Errorf("changed a clean document: %s → %s", c.in, got)
			}
			if c.want != "" && !strings.Contains(string(got), c.want) {
				t.Errorf("redactDoc(%s) = %s, want it to hold %s", c.in, got, c.want)
			}
			var v any
			if json.Unmarshal(got, &v) != nil {
				t.Errorf("redacted document does not parse: %s", got)
			}
			if strings.Contains(string(got), "plainsecret") || strings.Contains(string(got), "sk-") {
				t.Errorf("a credential survived: %s", got)
			}
		})
	}
	// A credential written inside a number cannot be redacted in place.
	digits := textRedactor{replacer{[]string{"31415926"}}}
	if _, ok := redactDoc(digits, []byte(`{"pin":31415926}`)); ok {
		t.Error("a credential in a number was passed on")
	}
}

// BenchmarkRedactResult: the cost of redacting a typical tool result (4
// KiB of text with line breaks, no credential) — decoded because it holds
// escapes — against replacing in its bytes alone.
func BenchmarkRedactResult(b *testing.B) {
	red := textRedactor{replacer{[]string{trickySecret, "plainsecret"}}}
	text := strings.Repeat("a line of ordinary tool output, nothing secret\n", 90)
	doc := ErrorResult(text)
	b.Run("redactDoc", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := redactDoc(red, doc); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("bytes-only", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = red.inner.Redact(string(doc))
		}
	})
}
