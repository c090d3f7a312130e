package redact

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// trickySecret holds the characters JSON and Go quote differently.
const trickySecret = `sk-<a>&"b\c/d`

func trickyRedactor() *Redactor {
	return New(map[string]string{"x": trickySecret, "y": "plainsecret"})
}

func TestQuoted(t *testing.T) {
	t.Parallel()
	r := trickyRedactor()
	cases := []struct{ in, want string }{
		{"no quotes plainsecret", "no quotes [REDACTED:y]"},
		{`parameter "how": ` + strconv.Quote(trickySecret) + ` does not match`, `parameter "how": "[REDACTED:x]" does not match`},
		{`a ` + strconv.Quote("x "+trickySecret+" y") + ` and ` + strconv.Quote(trickySecret), `a "x [REDACTED:x] y" and "[REDACTED:x]"`},
		{`stray " quote then ` + strconv.Quote(trickySecret), `stray " quote then "[REDACTED:x]"`},
		{`unterminated "` + trickySecret, `unterminated "[REDACTED:x]`},
		{`"ok" "plain"`, `"ok" "plain"`},
	}
	for _, c := range cases {
		if got := r.Quoted(c.in); got != c.want {
			t.Errorf("Quoted(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	red := trickyRedactor()
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
		{"raw", `{"text":"token plainsecret"}`, true, `"token [REDACTED:y]"`},
		{"go-encoded", string(goEnc), true, `"token [REDACTED:x]"`},
		{"every char escaped", `{"text":"` + allEscaped.String() + `"}`, true, `"token [REDACTED:x]"`},
		{"in a key", `{"plainsecret":1}`, true, `"[REDACTED:y]":1`},
		{"nested", `{"a":[{"b":"x plainsecret"}],"n":12345678901234567890}`, true, `12345678901234567890`},
		{"outside strings", `{"n":1,"plainsecret`, false, ""},
		{"in a number", `{"n":123}`, true, ""},
		{"not JSON with an escape", `{"a":"\q"}`, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := red.JSON([]byte(c.in))
			if ok != c.ok {
				t.Fatalf("JSON(%s) ok = %v, want %v (%s)", c.in, ok, c.ok, got)
			}
			if !ok {
				return
			}
			if c.want == "" && string(got) != c.in {
				t.Errorf("changed a clean document: %s → %s", c.in, got)
			}
			if c.want != "" && !strings.Contains(string(got), c.want) {
				t.Errorf("JSON(%s) = %s, want it to hold %s", c.in, got, c.want)
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
	digits := New(map[string]string{"pin": "31415926"})
	if _, ok := digits.JSON([]byte(`{"pin":31415926}`)); ok {
		t.Error("a credential in a number was passed on")
	}
}
