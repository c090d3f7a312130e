package redact

import (
	"encoding/json"
	"fmt"
	"reflect"
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
		if got := r.Redact(c.in); got != c.want {
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

// shortSecret is below minFragmentValue: its slices are not caught
// alone, so a split one is found only by reading the parts joined.
const shortSecret = "tg-Zq81-xK5w"

func blocks(texts ...string) string {
	var b strings.Builder
	b.WriteString(`{"content":[`)
	for i, s := range texts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"text","text":` + jsonString(s) + `}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestJSONReaderView: what a document's reader decodes — a text that is
// itself JSON with the credential \u-escaped (keys too, nested), a
// credential split across the text blocks of one result, an error's data
// or a notification's list of strings — is redacted; each case passed
// unredacted before.
func TestJSONReaderView(t *testing.T) {
	t.Parallel()
	red := New(map[string]string{"s": shortSecret, "tok": redactSecret})
	u := func(r rune) string { return fmt.Sprintf(`\u%04x`, r) }
	esc := escapeEach(shortSecret, u)
	cases := []struct {
		name, in string
		want     string // the redacted document, exactly
	}{
		{"json text, value", blocks(`{"k":"` + esc + `"}`),
			blocks(`{"k":"[REDACTED:s]"}`)},
		{"json text, key", blocks(`{"` + esc + `":"v"}`),
			blocks(`{"[REDACTED:s]":"v"}`)},
		{"json text in json text", blocks(`{"a":` + jsonString(`{"k":"`+esc+`"}`) + `}`),
			blocks(`{"a":` + jsonString(`{"k":"[REDACTED:s]"}`) + `}`)},
		{"json text with its own blocks split", blocks(blocks("x "+shortSecret[:5], shortSecret[5:]+" y")),
			blocks(blocks("x [REDACTED:s]", "[REDACTED:s] y"))},
		{"split in two blocks", blocks("token "+shortSecret[:5], shortSecret[5:]+" end"),
			blocks("token [REDACTED:s]", "[REDACTED:s] end")},
		{"split in three blocks", blocks("a "+shortSecret[:3], shortSecret[3:8], shortSecret[8:]+" z"),
			blocks("a [REDACTED:s]", "[REDACTED:s]", "[REDACTED:s] z")},
		{"split around an image", `{"content":[{"type":"text","text":"t ` + shortSecret[:6] + `"},{"type":"image","data":"AAAA"},{"type":"text","text":"` + shortSecret[6:] + `"}]}`,
			`{"content":[{"type":"text","text":"t [REDACTED:s]"},{"type":"image","data":"AAAA"},{"type":"text","text":"[REDACTED:s]"}]}`},
		{"split inside an escape", blocks(`k \u00`, `74g-Zq81-xK5w`),
			blocks(`k [REDACTED:s]`, `[REDACTED:s]`)},
		{"split, escaped", `{"content":[{"type":"text","text":"` + escapeEach(shortSecret[:4], u) + `"},{"text":"` + escapeEach(shortSecret[4:], u) + `","type":"text"}]}`,
			`{"content":[{"type":"text","text":"[REDACTED:s]"},{"text":"[REDACTED:s]","type":"text"}]}`},
		{"error data, a list of strings", `{"code":-32603,"message":"failed","data":["tok ` + shortSecret[:7] + `","` + shortSecret[7:] + `"]}`,
			`{"code":-32603,"message":"failed","data":["tok [REDACTED:s]","[REDACTED:s]"]}`},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[{"type":"text","text":"` + shortSecret[:2] + `"},{"type":"text","text":"` + shortSecret[2:] + `"}]}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[{"type":"text","text":"[REDACTED:s]"},{"type":"text","text":"[REDACTED:s]"}]}}`},
		{"blocks that only join into ordinary text", blocks("tg-", "Zq81", "-other"), blocks("tg-", "Zq81", "-other")},
		{"whole credentials stay each block's own", blocks("a "+shortSecret, shortSecret+" b"),
			blocks("a [REDACTED:s]", "[REDACTED:s] b")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, ok := red.JSON([]byte(c.in))
			if !ok {
				t.Fatalf("JSON(%s) refused", c.in)
			}
			if string(got) != c.want {
				t.Errorf("JSON(%s)\n got %s\nwant %s", c.in, got, c.want)
			}
		})
	}
}

// TestValueJoins: Value (a command's parsed output) reads the text items
// of an array joined, like JSON.
func TestValueJoins(t *testing.T) {
	t.Parallel()
	red := New(map[string]string{"s": shortSecret})
	v := []any{"a " + shortSecret[:4], map[string]any{"type": "text", "text": shortSecret[4:9]}, shortSecret[9:] + " b", json.Number("1")}
	got := red.Value(v)
	want := []any{"a [REDACTED:s]", map[string]any{"type": "text", "text": "[REDACTED:s]"}, "[REDACTED:s] b", json.Number("1")}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Value = %#v", got)
	}
	if got := red.Value(`{"k":"\u0074g-Zq81-xK5w"}`); got != `{"k":"[REDACTED:s]"}` {
		t.Errorf("Value of JSON text = %v", got)
	}
}

// TestJSONHostile: documents built to exhaust the redactor are answered:
// deep nesting, escape-dense strings, JSON text nested past the bound.
func TestJSONHostile(t *testing.T) {
	t.Parallel()
	red := New(map[string]string{"s": shortSecret})
	for _, depth := range []int{maxNesting - 1, 100000} {
		deep := strings.Repeat("[", depth) + `"` + shortSecret + `"` + strings.Repeat("]", depth)
		if got, ok := red.JSON([]byte(deep)); ok && strings.Contains(string(got), shortSecret) {
			t.Errorf("nesting %d: the credential was passed on", depth)
		}
		clean := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		if _, ok := red.JSON([]byte(clean)); !ok {
			t.Errorf("nesting %d without a credential was refused", depth)
		}
	}
	dense := `{"t":"` + strings.Repeat(`\\u005c`, 100000) + `"}`
	if _, ok := red.JSON([]byte(dense)); !ok {
		t.Error("an escape-dense string was refused")
	}
	nested := shortSecret
	for range 10 {
		nested = `{"k":` + jsonString(nested) + `}`
	}
	if got, ok := red.JSON([]byte(nested)); !ok || strings.Contains(string(got), shortSecret) {
		t.Errorf("nested JSON text: ok %v, %s", ok, got)
	}
	unterminated := `{"a":"` + shortSecret
	if _, ok := red.JSON([]byte(unterminated)); ok {
		t.Error("a broken document holding a credential was passed on")
	}
}
